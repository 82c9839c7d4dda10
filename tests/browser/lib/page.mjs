// The checks of one page the browser suite makes everywhere: status and URL, the security
// headers, <html lang>, the heading; what has the keyboard focus; and a navigation caused by a
// click or key press.

import { check } from './checks.mjs';

export function checkHeaders(response, label) {
  const headers = response.headers();
  const csp = headers['content-security-policy'];
  const cacheControl = headers['cache-control'];
  const noStore = (cacheControl || '').split(',').map((token) => token.trim().toLowerCase()).includes('no-store');
  check(
    Boolean(csp) && noStore,
    `${label}: headers have content-security-policy and cache-control: no-store`,
    `content-security-policy=${JSON.stringify(csp)} cache-control=${JSON.stringify(cacheControl)}`,
  );
}

export async function checkLang(page, label) {
  const lang = await page.evaluate(() => document.documentElement.getAttribute('lang'));
  check(Boolean(lang && lang.trim()), `${label}: <html lang="${lang}">`, `lang attribute is ${JSON.stringify(lang)}`);
}

export async function checkPage(page, response, label, { status, pathname, search, heading }) {
  check(response !== null, `${label}: the navigation got a response`);
  const url = new URL(page.url());
  check(
    response.status() === status && url.pathname === pathname && url.search === search,
    `${label}: ${status} at ${pathname}${search}`,
    `got ${response.status()} at ${url.pathname}${url.search}`,
  );
  checkHeaders(response, label);
  await checkLang(page, label);
  if (heading) {
    const h1 = page.getByRole('heading', { level: 1, name: heading, exact: true });
    check(await h1.isVisible(), `${label}: shows "${heading}"`, `h1 is ${JSON.stringify(await page.locator('h1').allInnerTexts())}`);
  }
}

export async function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return null;
    return {
      tag: el.tagName.toLowerCase(),
      name: el.getAttribute('name'),
      type: el.getAttribute('type'),
      text: el.tagName === 'BUTTON' ? el.textContent.trim() : undefined,
      href: el.getAttribute('href'),
    };
  });
}

export function describe(el) {
  if (!el) return '(page)';
  if (el.tag === 'button') return `button "${el.text}"`;
  if (el.tag === 'a') return `a[href=${el.href}]`;
  return `${el.tag}${el.type ? `[type=${el.type}]` : ''}${el.name ? `[name=${el.name}]` : ''}`;
}

export async function startFromTop(page) {
  // Focus back at the start of the document, as after a fresh load.
  await page.evaluate(() => {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    window.getSelection()?.removeAllRanges();
  });
}

// Clicks/presses and waits for the resulting main-frame navigation; returns its final response.
export async function navigateBy(page, action) {
  const navigation = page.waitForNavigation({ waitUntil: 'load' });
  await action();
  return navigation;
}

// A page in a fresh browser context with JavaScript off, as every flow that proves the pages
// need no script uses: 1280 px wide, the suite's timeouts, console errors (CSP violations among
// them) and failed loads collected in `consoleErrors` for the flow to check at its end, and the
// proof that JavaScript really is off (a <script> in a page of this context does not run).
export async function jsOffPage(browser, label) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
  });
  page.on('requestfailed', (request) => consoleErrors.push(`${request.failure()?.errorText} ${request.url()}`));
  await page.setContent('<title>before</title><script>document.title = "after"</script>');
  check((await page.title()) === 'before', `${label}: JavaScript is off in the browser context (a <script> does not run)`);
  return { context, page, consoleErrors };
}

// The id of the focused element, or null for the page itself.
export async function focusedId(page) {
  return page.evaluate(() => (document.activeElement === document.body ? null : document.activeElement?.id || null));
}

// Presses keys one at a time and keeps the trail (`Tab→list-alpha Space→list-alpha …`) for the
// failure message of a keyboard-only walk through a form.
export function keyWalk(page) {
  const steps = [];
  const press = async (key) => {
    await page.keyboard.press(key);
    steps.push(`${key}→${(await focusedId(page)) || '(page)'}`);
  };
  return { press, trail: () => steps.join(' ') };
}
