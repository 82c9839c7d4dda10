// signupd in a real browser: Debian's Chromium (/usr/bin/chromium), driven by playwright-core,
// against target/debug/signupd serving on free loopback ports with the file mail transport.
// Signs up with the keyboard, confirms from the link in the .eml file, removes the address with
// "Remove me from all" on the preference page the welcome mail's manage link opens, and checks
// the form's error state, <html lang>, the security headers of every page and the layout at
// phone width. Signs up for two lists in one form with JavaScript off and confirms both with one
// button (multilist.mjs); ticks and unticks lists of one sender on the preference page with
// JavaScript off (preferences.mjs); confirms a list whose confirmed_url is on another origin and
// lands there (confirmed-url.mjs). Then the accessibility matrix
// (a11y.mjs): every page, also of lists with an accent colour, a site name and German texts, in
// light and dark colour scheme at 375 and 1280 px, checked with axe-core, screenshots in
// target/browser-screenshots/, one of which docs/install.md shows (lib/doc-screenshot.mjs
// checks the committed copy still matches the page). Then the status page on the metrics
// listener (status.mjs): after real traffic, with JavaScript off, and axe in both schemes at both
// widths, screenshots status-*.png. Then surge mode (surge.mjs): lists in English and German past
// surge_alert, the hosted form by keyboard with JavaScript off to the page with "Send my
// confirmation email", the press by keyboard to check-inbox and the mail it releases, no mail
// for signups never pressed, and axe on the page in both schemes at both widths, screenshots
// surge-*.png. Then the admin page (admin.mjs): signed in through the browser's Basic prompt
// with JavaScript off, search, re-send and removal, a forged post from another origin refused,
// axe in both schemes at both widths, screenshots admin-*.png. Then a list's form fields
// (fields.mjs): a required text field, an optional select and a hidden campaign on the hosted
// form with JavaScript off, refused and kept, by keyboard only, too long or not an option, the
// values on the preference page, axe on the form, its field error, the preference and privacy
// pages in both schemes at both widths, screenshots fields-*.png. Then languages
// (languages.mjs): every page in the pseudo-locale en-XA and, with locales/ar.ftl, in Arabic
// right to left: lang and dir, no overflow or clipped text, axe, screenshots lang-*.png. Then
// one list in two languages on a real Hugo site (hugo.mjs): the partial `signupd snippet --for
// hugo --lang CODE` on each language's page, each posted with JavaScript off, each confirmation
// arriving in its page's language (both subjects printed). No mocks (a control in
// confirmed-url.mjs rewrites one header to show its check can fail), no fixed sleeps.
// Run by .ci/browser (it installs Chromium, runs npm ci and builds the binary). Prints one line
// per check and exits 1 at the first failed check (the axe matrix lists all its violations
// first). SIGNUPD_BROWSER_KEEP=1 keeps the temp folder (configs, data, mail, server logs); it is
// kept anyway after a failure.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { A11Y_LISTS, pageSpecs, runMatrix } from './a11y.mjs';
import { axeVersion } from './lib/axe.mjs';
import { CheckFailed, check, counts, ok } from './lib/checks.mjs';
import { checkDocScreenshot } from './lib/doc-screenshot.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { checkPage, describe, focused, navigateBy, startFromTop } from './lib/page.mjs';
import { servers, startServer } from './lib/server.mjs';
import { adminFlow } from './admin.mjs';
import { confirmedUrlFlow } from './confirmed-url.mjs';
import { fieldsFlow } from './fields.mjs';
import { hugoFlow } from './hugo.mjs';
import { MULTI_LISTS, multiListFlow } from './multilist.mjs';
import { preferencesFlow } from './preferences.mjs';
import { statusFlow } from './status.mjs';
import { surgeFlow } from './surge.mjs';
import { languagesFlow } from './languages.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
// Where cargo put it: CARGO_TARGET_DIR when set (a shared build directory), else target/.
const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const binary = process.env.SIGNUPD_BIN || path.join(targetDir, 'debug', 'signupd');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const shotDir = path.join(root, 'target', 'browser-screenshots');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const OVERALL_CAP_MS = 480_000;

let tmp;
let browser;

// ---------------------------------------------------------------------------------------------

async function main() {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signupd-browser-'));
  console.log(`temp folder: ${tmp}`);
  check(fs.existsSync(binary), `signupd binary exists (${binary})`, `${binary} is missing; run cargo build --locked --bin signupd`);
  check(fs.existsSync(chromiumPath), `Chromium exists (${chromiumPath})`, 'install the Debian package chromium');

  // ---- the servers: one list (the hosted form at /), and two lists (the chooser at /, a
  // retype list) for the accessibility matrix, which signs up more often than the default
  // rate limit allows from one client.
  const flow = await startServer(binary, path.join(tmp, 'flow'), 'flow server', [{ id: 'news', name: 'News' }]);
  const lists = await startServer(
    binary,
    path.join(tmp, 'lists'),
    'lists server',
    A11Y_LISTS,
    { signup: ['rate_limits = [ { window = "10m", max = 100 } ]'] },
  );
  // Several lists in one form (multilist.mjs): two lists of one sender, one of another.
  const multi = await startServer(
    binary,
    path.join(tmp, 'multi'),
    'multi-list server',
    MULTI_LISTS,
    { signup: ['rate_limits = [ { window = "10m", max = 100 } ]'] },
  );
  const { base, mailDir } = flow;

  // ---- the browser
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 30_000,
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  // Console errors (a CSP violation logs "Refused to …") and failed subresource loads. Chromium
  // also logs "Failed to load resource" for every 4xx page, the intended 400 form among them,
  // and for the /favicon.ico it asks for by itself: those are not failures here.
  const consoleErrors = [];
  const failedLoads = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      consoleErrors.push(message.text());
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  page.on('response', (answer) => {
    const request = answer.request();
    if (request.isNavigationRequest() || answer.status() < 400) return;
    if (new URL(answer.url()).pathname === '/favicon.ico') return;
    failedLoads.push(`${answer.status()} ${answer.url()}`);
  });
  page.on('requestfailed', (request) => failedLoads.push(`${request.failure()?.errorText} ${request.url()}`));
  ok(`Chromium ${browser.version()} launched headless`);

  // ---- the signup form
  let response = await page.goto(`${base}/`);
  await checkPage(page, response, 'GET /', { status: 200, pathname: '/', search: '' });

  const email = page.getByLabel('Email address', { exact: true });
  check(await email.isVisible(), 'GET /: the "Email address" field is labelled and visible');
  check((await email.getAttribute('type')) === 'email', 'GET /: the email field is type=email');
  const consent = page.getByRole('checkbox', { name: /\S/ });
  check(
    (await consent.count()) === 1 && (await consent.isVisible()),
    'GET /: the consent checkbox is visible and has a label',
    `${await consent.count()} labelled checkboxes`,
  );
  console.log(`     consent label: ${JSON.stringify((await consent.ariaSnapshot()).trim())}`);

  const honeypot = page.locator('input[name="website"]');
  check((await honeypot.count()) === 1, 'GET /: the honeypot input "website" is in the form');
  const honeypotVisible = await honeypot.isVisible();
  const box = await honeypot.boundingBox();
  const viewport = page.viewportSize();
  const offScreen = !box || box.x + box.width <= 0 || box.y + box.height <= 0 || box.x >= viewport.width;
  check(
    !honeypotVisible || offScreen,
    `GET /: the honeypot is not visible to people (isVisible=${honeypotVisible}, box=${box ? `x=${box.x},y=${box.y},${box.width}x${box.height}` : 'none'})`,
  );
  const textboxes = await page.getByRole('textbox').count();
  check(textboxes === 1, 'GET /: the honeypot is hidden from the accessibility tree (one textbox: the email field)', `${textboxes} textboxes`);

  // Tab through the whole page: focus must go email → consent → button, never to the honeypot;
  // after the form come only links (the site's footer).
  await startFromTop(page);
  const order = [];
  for (let i = 0; i < 8; i += 1) {
    await page.keyboard.press('Tab');
    const el = await focused(page);
    if (!el) break; // focus left the page
    if (order.length && describe(order[0]) === describe(el)) break; // wrapped around
    order.push(el);
  }
  const orderText = order.map(describe).join(' → ');
  check(!order.some((el) => el.name === 'website'), 'GET /: Tab never focuses the honeypot', `focus order: ${orderText}`);
  const formOrder = order.filter((el) => el.tag !== 'a').map(describe).join(' → ');
  const firstLink = order.findIndex((el) => el.tag === 'a');
  check(
    formOrder === 'input[type=email][name=email] → input[type=checkbox][name=consent] → button "Sign up"' &&
      (firstLink < 0 || order.slice(firstLink).every((el) => el.tag === 'a')),
    `GET /: Tab order is ${orderText}`,
    `expected email → consent → "Sign up", then links only`,
  );

  // Sign up with the keyboard only.
  const address = 'reader@example.com';
  await startFromTop(page);
  await page.keyboard.press('Tab');
  check(await email.evaluate((el) => el === document.activeElement), 'GET /: the first Tab focuses the email field');
  await page.keyboard.type(address);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  check(await consent.isChecked(), 'GET /: Space ticks the focused consent checkbox');
  await page.keyboard.press('Tab');
  check(
    await page.getByRole('button', { name: 'Sign up' }).evaluate((el) => el === document.activeElement),
    'GET /: the next Tab focuses the "Sign up" button',
  );
  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, 'signup (Enter)', {
    status: 200,
    pathname: '/check-inbox',
    search: '?list=news',
    heading: 'Check your inbox',
  });

  // ---- the confirmation mail
  const seen = new Set();
  const confirmMail = await waitForMailLink(mailDir, base, '/confirm', seen);
  ok(`confirmation mail ${confirmMail.file}: text part (${confirmMail.encoding}) has the confirm link`);
  check(confirmMail.htmlHasLink, 'confirmation mail: the HTML part has the same confirm link');

  response = await page.goto(confirmMail.link);
  await checkPage(page, response, 'GET /confirm', { status: 200, pathname: '/confirm', search: new URL(confirmMail.link).search });
  const confirmButton = page.getByRole('button', { name: 'Confirm signup', exact: true });
  check(await confirmButton.isVisible(), 'GET /confirm: shows a "Confirm signup" button');
  response = await navigateBy(page, () => confirmButton.click());
  await checkPage(page, response, 'confirm (click)', {
    status: 200,
    pathname: '/confirmed',
    search: '?list=news',
    heading: 'You are signed up',
  });

  // ---- the welcome mail and removal
  const welcomeMail = await waitForMailLink(mailDir, base, '/manage', seen);
  ok(`welcome mail ${welcomeMail.file}: text part (${welcomeMail.encoding}) has the manage link`);
  check(welcomeMail.htmlHasLink, 'welcome mail: the HTML part has the same manage link');

  // The manage link opens the preference page: the one list, ticked; "Remove me from all".
  const manageSearch = new URL(welcomeMail.link).search;
  response = await page.goto(welcomeMail.link);
  await checkPage(page, response, 'GET /manage', {
    status: 200,
    pathname: '/manage',
    search: manageSearch,
    heading: 'Your email preferences',
  });
  const newsBox = page.getByRole('checkbox', { name: /^News\b/ });
  check(
    (await page.getByRole('checkbox').count()) === 1 && (await newsBox.isChecked()),
    'GET /manage: the preference page has one checkbox, "News", ticked',
  );
  const removeButton = page.getByRole('button', { name: 'Remove me from all', exact: true });
  check(
    (await removeButton.isVisible()) && (await page.getByRole('button', { name: 'Save', exact: true }).isVisible()),
    'GET /manage: shows "Save" and "Remove me from all" buttons',
  );
  response = await navigateBy(page, () => removeButton.click());
  await checkPage(page, response, 'remove me from all (click)', {
    status: 200,
    pathname: '/removed',
    search: '?list=news',
    heading: 'Address removed',
  });
  console.log(`     /removed says: ${JSON.stringify((await page.locator('main').innerText()).replace(/\s+/g, ' ').trim())}`);
  // The link names no row any more: the page from before the preference page, no list shown.
  response = await page.goto(welcomeMail.link);
  await checkPage(page, response, 'GET /manage after removal', {
    status: 200,
    pathname: '/manage',
    search: manageSearch,
    heading: 'Remove my address',
  });
  check((await page.getByRole('checkbox').count()) === 0, 'GET /manage after removal: no list, no checkbox');

  // ---- errors keep the form and the typed text
  const invalid = 'not-an-address';
  response = await page.goto(`${base}/`);
  await checkPage(page, response, 'GET / again', { status: 200, pathname: '/', search: '' });
  await email.fill(invalid);
  await consent.check();
  response = await navigateBy(page, () => page.getByRole('button', { name: 'Sign up' }).click());
  await checkPage(page, response, 'invalid address', { status: 400, pathname: '/api/signup', search: '' });
  const alert = page.getByRole('alert');
  const alertText = (await alert.count()) === 1 ? (await alert.innerText()).trim() : '';
  check(alertText !== '' && (await alert.isVisible()), `invalid address: shows an error: ${JSON.stringify(alertText)}`, 'no visible role=alert message');
  check((await email.inputValue()) === invalid, `invalid address: the field still holds "${invalid}"`, `it holds ${JSON.stringify(await email.inputValue())}`);
  const describedBy = await email.getAttribute('aria-describedby');
  const alertId = await alert.getAttribute('id');
  check(Boolean(describedBy) && describedBy.split(/\s+/).includes(alertId), 'invalid address: the field is aria-describedby the error', `aria-describedby=${describedBy} error id=${alertId}`);

  // ---- phone width
  await page.setViewportSize({ width: 375, height: 667 });
  response = await page.goto(`${base}/`);
  await checkPage(page, response, 'GET / at 375×667', { status: 200, pathname: '/', search: '' });
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(scrollWidth <= 375, `GET / at 375×667: no horizontal scroll (scrollWidth ${scrollWidth})`);
  for (const [name, locator] of [
    ['email field', email],
    ['consent checkbox', consent],
    ['Sign up button', page.getByRole('button', { name: 'Sign up' })],
  ]) {
    const b = await locator.boundingBox();
    check(Boolean(b) && b.x >= 0 && b.x + b.width <= 375, `GET / at 375×667: the ${name} fits the width`, JSON.stringify(b));
  }
  const shot = path.join(tmp, 'signup-375x667.png');
  await page.screenshot({ path: shot, fullPage: true });
  ok(`screenshot of the signup form at phone width: ${shot}`);

  await email.fill(invalid);
  await consent.check();
  await navigateBy(page, () => page.getByRole('button', { name: 'Sign up' }).click());
  const errorScrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(errorScrollWidth <= 375, `error page at 375×667: no horizontal scroll (scrollWidth ${errorScrollWidth})`);
  const errorShot = path.join(tmp, 'signup-error-375x667.png');
  await page.screenshot({ path: errorShot, fullPage: true });
  ok(`screenshot of the error state at phone width: ${errorShot}`);

  check(consoleErrors.length === 0, 'no console errors (CSP violations) on any page', consoleErrors.join(' | '));
  check(failedLoads.length === 0, 'no failed stylesheet or other subresource loads on any page', failedLoads.join(' | '));

  await context.close();

  // ---- several lists in one form, JavaScript off
  await multiListFlow(browser, multi);

  // ---- the preference page, JavaScript off: the two lists of one sender
  await preferencesFlow(browser, multi);

  // ---- a list's confirmed_url on another origin, JavaScript off
  await confirmedUrlFlow(browser, binary, tmp);

  // ---- the accessibility matrix
  const specs = await pageSpecs(base, lists, multi);
  console.log(`     axe-core ${axeVersion}: ${specs.length} pages`);
  await runMatrix(browser, specs, shotDir);
  checkDocScreenshot(root, shotDir);

  // ---- the status page on the metrics listener (after the matrix, which empties shotDir)
  await statusFlow(browser, binary, tmp, shotDir);

  // ---- surge mode: the press-to-send page, JavaScript off, and axe on it
  await surgeFlow(browser, binary, tmp, shotDir);

  // ---- the admin page on the metrics listener: JavaScript off, a forged post, and axe on it
  await adminFlow(browser, binary, tmp, shotDir);

  // ---- a list's form fields: JavaScript off, keyboard only, refusals, and axe on the pages
  await fieldsFlow(browser, binary, tmp, shotDir);

  // ---- languages: the pseudo-locale's longer texts and Arabic right to left, layout and axe
  await languagesFlow(browser, binary, tmp, shotDir);

  // ---- one list in two languages on a real Hugo site, JavaScript off
  await hugoFlow(browser, binary, tmp);

  await browser.close();
  browser = undefined;
  ok('Chromium closed');

  // ---- shutdown
  await flow.stop();
  await lists.stop();
  await multi.stop();
}

// Never leave a server behind, whatever ends this process.
process.on('exit', () => {
  for (const server of servers) if (server.running()) server.child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.log(`FAIL interrupted by ${signal}`);
    process.exit(1);
  });
}

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${OVERALL_CAP_MS / 1000} s`);
  for (const server of servers) if (server.running()) server.child.kill('SIGKILL');
  console.log(`browser: ${counts.passed} passed, 1 failed`);
  process.exit(1);
}, OVERALL_CAP_MS);

let failure = null;
try {
  await main();
} catch (error) {
  failure = error;
}
clearTimeout(watchdog);

if (browser) await browser.close().catch(() => {});
await Promise.all(servers.map((server) => server.kill()));

if (failure) {
  console.log(`FAIL ${failure instanceof CheckFailed ? failure.message : failure.stack || failure}`);
  for (const server of servers) console.log(`--- last lines of ${server.log}\n${server.tail()}\n---`);
  if (tmp) console.log(`temp folder kept: ${tmp}`);
  console.log(`browser: ${counts.passed} passed, 1 failed`);
  process.exit(1);
}

if (process.env.SIGNUPD_BROWSER_KEEP) {
  console.log(`temp folder kept: ${tmp}`);
} else {
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`browser: ${counts.passed} passed, 0 failed`);
