// Surge mode (docs/operations.md, "Under attack"; docs/http-api.md, "Surge mode") in Chromium
// with JavaScript off: a server with `surge_alert = { window = "10m", max = 1 }` and two lists,
// one English, one German (with a site name and link, so the page has a header link to pass).
// Per list: signups posted like a plain form until the answer is surge mode's (the 2nd signup
// on the list already is, or the 3rd if the fixed window turned in between; once a list is in
// surge it stays so for at least a whole window, so everything after is in surge); then, with
// the keyboard only, the hosted form (GET /signup?list=ID) twice: once left on the surge page
// unpressed, once pressed. The surge page: 200 at /check-inbox?list=ID&send=TOKEN, <html lang>,
// heading, text and the one button in the list's language, one POST form to /api/send carrying
// the token, no <script>. Tab reaches the button, Enter lands on the plain "Check your inbox"
// page, and the confirmation mail for that address arrives and confirms. A filled honeypot gets
// the same page, and pressing it sends nothing. Once both pressed mails are in, and the mail
// worker (a 1 s tick) has had 2.5 s more, no mail went to any address that was never pressed.
// Then axe-core on both surge pages in light and dark colour scheme at 375 and 1280 px, with
// screenshots to target/browser-screenshots/surge-<lang>-<theme>-<width>.png.
// e2e.mjs runs it after the status page; `node tests/browser/surge.mjs` runs it alone.

import fs from 'node:fs';
import path from 'node:path';

import { THEMES, VIEWPORTS } from './a11y.mjs';
import { describeViolations, runAxe } from './lib/axe.mjs';
import { CheckFailed, check, ok, sleep } from './lib/checks.mjs';
import { readMail, waitForMailLink } from './lib/mail.mjs';
import { checkHeaders, checkPage, describe, focused, focusedId, jsOffPage, navigateBy, startFromTop } from './lib/page.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { startServer } from './lib/server.mjs';

// The mail worker sends on a 1 s tick: after the pressed mail is out, this long more shows
// that the held ones stay held (two and a half ticks).
const HELD_QUIET_MS = 2500;
// Signups posted to put a list into surge: 2 with max = 1, 3 if the window turned in between.
const PRIME_CAP = 4;

export const SURGE_LISTS = [
  { id: 'surge-en', name: 'Surge News' },
  { id: 'surge-de', name: 'Wellenbrief', language: 'de', site_name: 'Beispiel GmbH', site_url: 'https://beispiel.example/' },
];

// What the pages say, per language (locales/*.ftl: surge-, check-inbox- and signup- messages).
const WORDS = {
  en: {
    signup: (list) => `Sign up for ${list}`,
    surge: 'One more step',
    unusual: 'This site is seeing unusual traffic right now',
    button: 'Send my confirmation email',
    checkInbox: 'Check your inbox',
    confirm: 'Confirm your signup',
    confirmButton: 'Confirm signup',
    confirmed: 'You are signed up',
  },
  de: {
    signup: (list) => `Anmeldung für ${list}`,
    surge: 'Noch ein Schritt',
    unusual: 'Diese Seite hat gerade ungewöhnlich viel Verkehr',
    button: 'Bestätigungsmail senden',
    checkInbox: 'Sehen Sie in Ihr Postfach',
    confirm: 'Anmeldung bestätigen',
    confirmButton: 'Anmeldung bestätigen',
    confirmed: 'Sie sind angemeldet',
  },
};

// POST /api/signup as a plain HTML form would, without following the redirect.
async function postSignup(base, fields) {
  const answer = await fetch(`${base}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: answer.status, location: answer.headers.get('location') || '' };
}

// A surge redirect: /check-inbox?list=ID&send=TOKEN, nothing else in the query. Returns the
// token or null.
function surgeToken(location, list) {
  let url;
  try {
    url = new URL(location, 'http://x');
  } catch {
    return null;
  }
  const keys = [...url.searchParams.keys()];
  const send = url.searchParams.get('send');
  const good =
    url.pathname === '/check-inbox' && url.searchParams.get('list') === list && Boolean(send) && keys.join(',') === 'list,send';
  return good ? send : null;
}

// Posts signups to `list` until the answer is surge mode's; returns the addresses, the first
// of them accepted normally (its mail goes out) and the last held.
async function primeSurge(server, list) {
  const addresses = [];
  for (let n = 1; n <= PRIME_CAP; n += 1) {
    const email = `prime-${n}-${list}@example.com`;
    addresses.push(email);
    const answer = await postSignup(server.base, { email, consent: 'yes', list });
    if (surgeToken(answer.location, list)) {
      check(
        answer.status === 303 && n >= 2,
        `${list}: signup ${n} answers 303 to the surge page (${answer.location.replace(/send=[^&]+/, 'send=…')})`,
        `status ${answer.status} after only ${n} signup(s)`,
      );
      return { normal: addresses[0], held: addresses.slice(1) };
    }
    check(
      answer.status === 303 && answer.location === `/check-inbox?list=${list}`,
      `${list}: signup ${n} (${email}) answers 303 to /check-inbox?list=${list}, not yet in surge`,
      `status ${answer.status} location ${JSON.stringify(answer.location)}`,
    );
  }
  throw new CheckFailed(`${list}: not in surge after ${PRIME_CAP} signups with surge_alert max = 1`);
}

// Tabs from the top of the page until `want(el)` holds for the focused element, at most `max`
// presses; returns the trail of focus ("Tab→a[href=…] Tab→input[type=email][name=email]").
async function tabTo(page, want, max) {
  await startFromTop(page);
  const steps = [];
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    const el = await focused(page);
    steps.push(`Tab→${describe(el)}`);
    if (el && want(el)) return { reached: true, trail: steps.join(' ') };
  }
  return { reached: false, trail: steps.join(' ') };
}

// Fills the hosted form of `list` with the keyboard only and presses Enter on "Sign up";
// returns the response of the page it lands on.
async function signUpByKeyboard(page, server, list, address) {
  const w = WORDS[list.language || 'en'];
  const where = `${list.id} form (${address})`;
  const response = await page.goto(`${server.base}/signup?list=${list.id}`);
  await checkPage(page, response, where, { status: 200, pathname: '/signup', search: `?list=${list.id}`, heading: w.signup(list.name) });
  // Only the site's link may come before the email field.
  const toEmail = await tabTo(page, (el) => el.name === 'email', list.site_url ? 2 : 1);
  check(toEmail.reached, `${where}: Tab reaches the email field first (${toEmail.trail})`, toEmail.trail);
  await page.keyboard.type(address);
  await page.keyboard.press('Tab');
  check((await focusedId(page)) === 'consent', `${where}: the next Tab focuses the consent checkbox`, describe(await focused(page)));
  await page.keyboard.press('Space');
  check(await page.locator('#consent').isChecked(), `${where}: Space ticks the consent checkbox`);
  await page.keyboard.press('Tab');
  const button = await focused(page);
  check(button?.tag === 'button' && button.type === 'submit', `${where}: the next Tab focuses the submit button`, describe(button));
  return navigateBy(page, () => page.keyboard.press('Enter'));
}

// The surge page the browser is on: its URL, headers, language, words, form and no script.
// Returns its token.
async function checkSurgePage(page, response, list, where) {
  const lang = list.language || 'en';
  const w = WORDS[lang];
  check(response !== null, `${where}: the navigation got a response`);
  const token = surgeToken(page.url(), list.id);
  check(
    response.status() === 200 && token !== null,
    `${where}: 200 at /check-inbox?list=${list.id}&send=…`,
    `got ${response.status()} at ${page.url()}`,
  );
  checkHeaders(response, where);
  const seen = await page.evaluate(() => ({
    lang: document.documentElement.getAttribute('lang'),
    h1: [...document.querySelectorAll('h1')].map((h) => h.textContent.trim()),
    main: document.querySelector('main')?.innerText.replace(/\s+/g, ' ') || '',
    scripts: document.querySelectorAll('script').length,
    handlers: [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => a.name)),
    forms: [...document.forms].map((form) => ({
      method: form.getAttribute('method'),
      action: form.action, // resolved against the page
      fields: [...form.elements].map((el) => ({ tag: el.tagName.toLowerCase(), type: el.getAttribute('type'), name: el.name, value: el.value })),
    })),
    buttons: [...document.querySelectorAll('button, input[type=submit], input[type=button]')].length,
  }));
  check(seen.lang === lang, `${where}: <html lang="${lang}">`, `lang is ${JSON.stringify(seen.lang)}`);
  check(seen.h1.length === 1 && seen.h1[0] === w.surge, `${where}: h1 "${w.surge}"`, `h1 is ${JSON.stringify(seen.h1)}`);
  check(seen.main.includes(w.unusual), `${where}: says "${w.unusual} …"`, seen.main);
  const button = page.getByRole('button', { name: w.button, exact: true });
  check(
    seen.buttons === 1 && (await button.count()) === 1 && (await button.isVisible()),
    `${where}: one button, "${w.button}"`,
    `${seen.buttons} buttons`,
  );
  const html = await response.text();
  check(
    seen.scripts === 0 && !/<script/i.test(html) && seen.handlers.length === 0,
    `${where}: no <script> and no event handler attribute`,
    `${seen.scripts} script elements, handlers ${JSON.stringify(seen.handlers)}`,
  );
  const wanted = JSON.stringify([
    {
      method: 'post',
      action: `${new URL(page.url()).origin}/api/send`,
      fields: [
        { tag: 'input', type: 'hidden', name: 'send', value: token },
        { tag: 'button', type: 'submit', name: '', value: '' },
      ],
    },
  ]);
  check(
    JSON.stringify(seen.forms) === wanted,
    `${where}: one POST form to /api/send: the token in a hidden "send" field, and the button`,
    `forms: ${JSON.stringify(seen.forms)}`,
  );
  const styled = await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth);
  check(styled !== 'none', `${where}: the stylesheet loaded under the CSP (main max-width ${styled})`);
  return token;
}

// The addresses of the .eml files in `mailDir` that are addressed to one of `addresses`.
function mailsTo(mailDir, addresses) {
  if (!fs.existsSync(mailDir)) return [];
  return fs
    .readdirSync(mailDir)
    .filter((name) => name.endsWith('.eml'))
    .map((name) => ({ name, to: readMail(path.join(mailDir, name)).headers.to || '' }))
    .filter((mail) => addresses.some((address) => mail.to.includes(address)));
}

// One list: prime it into surge, then the browser. Returns { surgeUrl, pressed, neverPressed }.
async function listFlow(browser, server, list, seen) {
  const w = WORDS[list.language || 'en'];
  const { base, mailDir } = server;
  const primed = await primeSurge(server, list.id);
  const normalMail = await waitForMailLink(mailDir, base, '/confirm', seen, primed.normal);
  ok(`${list.id}: the signup before the surge got its confirmation mail (${normalMail.file})`);

  const { context, page, consoleErrors } = await jsOffPage(browser, `surge ${list.id}`);

  // ---- a signup left on the surge page, never pressed
  const unpressed = `unpressed-${list.id}@example.com`;
  let response = await signUpByKeyboard(page, server, list, unpressed);
  await checkSurgePage(page, response, list, `${list.id} surge page (${unpressed}, never pressed)`);

  // ---- the signup that presses
  const address = `pressed-${list.id}@example.com`;
  response = await signUpByKeyboard(page, server, list, address);
  const where = `${list.id} surge page (${address})`;
  const token = await checkSurgePage(page, response, list, where);
  const surgeUrl = page.url();
  // Tab from the top: past the site's link (if any) to the button, nothing else on the way.
  const toButton = await tabTo(page, (el) => el.tag === 'button', list.site_url ? 2 : 1);
  check(toButton.reached, `${where}: Tab reaches "${w.button}" (${toButton.trail})`, toButton.trail);
  check(
    (await page.getByRole('button', { name: w.button, exact: true }).evaluate((el) => el === document.activeElement)),
    `${where}: the focused button is "${w.button}"`,
  );
  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, `${list.id} press (Enter)`, {
    status: 200,
    pathname: '/check-inbox',
    search: `?list=${list.id}`,
    heading: w.checkInbox,
  });
  check(
    (await page.getByRole('button').count()) === 0 && (await page.locator('form').count()) === 0,
    `${list.id} press (Enter): the plain check-inbox page, no button, no form`,
  );

  // ---- the pressed mail arrives, and confirms
  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, address);
  ok(`${list.id}: the pressed signup's confirmation mail arrived (${mail.file}, to ${mail.headers.to})`);
  check(mail.htmlHasLink, `${list.id}: the HTML part has the same confirm link`);
  response = await page.goto(mail.link);
  await checkPage(page, response, `${list.id} GET /confirm`, {
    status: 200,
    pathname: '/confirm',
    search: new URL(mail.link).search,
    heading: w.confirm,
  });
  response = await navigateBy(page, () => page.getByRole('button', { name: w.confirmButton, exact: true }).click());
  await checkPage(page, response, `${list.id} confirm (click)`, {
    status: 200,
    pathname: '/confirmed',
    search: `?list=${list.id}`,
    heading: w.confirmed,
  });
  const welcome = await waitForMailLink(mailDir, base, '/manage', seen, address);
  ok(`${list.id}: the welcome mail arrived (${welcome.file})`);

  // ---- the honeypot: the same surge page; its press answers the same and sends nothing
  const bot = `honeypot-${list.id}@example.com`;
  const trap = await postSignup(base, { email: bot, consent: 'yes', list: list.id, website: 'https://spam.example/' });
  check(
    trap.status === 303 && surgeToken(trap.location, list.id) !== null,
    `${list.id}: a filled honeypot also answers 303 to /check-inbox?list=${list.id}&send=…`,
    `status ${trap.status} location ${JSON.stringify(trap.location)}`,
  );
  response = await page.goto(`${base}${trap.location}`);
  const trapToken = await checkSurgePage(page, response, list, `${list.id} surge page (honeypot)`);
  check(trapToken !== token, `${list.id} surge page (honeypot): a token of its own`);
  const trapTab = await tabTo(page, (el) => el.tag === 'button', list.site_url ? 2 : 1);
  check(trapTab.reached, `${list.id} surge page (honeypot): Tab reaches the button`, trapTab.trail);
  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, `${list.id} honeypot press (Enter)`, {
    status: 200,
    pathname: '/check-inbox',
    search: `?list=${list.id}`,
    heading: w.checkInbox,
  });

  check(consoleErrors.length === 0, `${list.id}: no console errors (CSP violations) or failed loads`, consoleErrors.join(' | '));
  await context.close();
  return { surgeUrl, pressed: address, neverPressed: [...primed.held, unpressed, bot] };
}

async function axeMatrix(browser, pages, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  const problems = [];
  for (const theme of THEMES) {
    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ colorScheme: theme, viewport });
      const page = await context.newPage();
      const pageErrors = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
      });
      for (const { lang, url } of pages) {
        const where = `surge ${lang} ${theme} ${viewport.width}px`;
        const response = await page.goto(url);
        check(response.status() === 200, `${where}: 200`);
        const h1 = (await page.locator('h1').allInnerTexts()).map((text) => text.trim());
        check(h1.length === 1 && h1[0] === WORDS[lang].surge, `${where}: h1 "${WORDS[lang].surge}"`, JSON.stringify(h1));
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
        const result = await runAxe(page);
        const scheme = await page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
        if (scheme !== theme) throw new CheckFailed(`${where}: the page sees prefers-color-scheme ${scheme}`);
        const lines = describeViolations(result.violations).map((line) => `${where}: ${line}`);
        problems.push(...lines);
        await page.screenshot({ path: path.join(shotDir, `surge-${lang}-${theme}-${viewport.width}.png`), fullPage: true });
        if (lines.length === 0) {
          ok(`${where}: axe ${result.ran} rules, no violation${result.incomplete.length ? ` (to review: ${result.incomplete.map((rule) => rule.id).join(', ')})` : ''}`);
        } else {
          console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
        }
      }
      check(pageErrors.length === 0, `surge ${theme} ${viewport.width}px: no console errors`, pageErrors.join(' | '));
      await context.close();
    }
  }
  check(problems.length === 0, 'surge: axe found no violation', `${problems.length} violation(s):\n  ${problems.join('\n  ')}`);
  ok(`surge: screenshots in ${shotDir}`);
}

// The whole module: its own server (an English and a German list in surge), the browser flows,
// the held mail, the axe matrix.
export async function surgeFlow(browser, binary, tmp, shotDir) {
  const server = await startServer(binary, path.join(tmp, 'surge'), 'surge server', SURGE_LISTS, {
    signup: ['rate_limits = [ { window = "10m", max = 100 } ]', 'surge_alert = { window = "10m", max = 1 }'],
  });
  const seen = new Set();
  const results = [];
  for (const list of SURGE_LISTS) results.push({ lang: list.language || 'en', ...(await listFlow(browser, server, list, seen)) });

  // Both pressed mails are in; the worker gets two more ticks for anything it should not send.
  await sleep(HELD_QUIET_MS);
  const neverPressed = results.flatMap((result) => result.neverPressed);
  const leaked = mailsTo(server.mailDir, neverPressed);
  check(
    leaked.length === 0,
    `surge: ${HELD_QUIET_MS / 1000} s after the pressed mails, none went to the ${neverPressed.length} signups never pressed (${neverPressed.join(', ')})`,
    `mailed: ${leaked.map((mail) => `${mail.name} to ${mail.to}`).join(', ')}`,
  );
  const pressedMails = mailsTo(server.mailDir, results.map((result) => result.pressed));
  check(pressedMails.length === results.length * 2, `surge: each pressed address got one confirmation and one welcome mail`, pressedMails.map((m) => `${m.name} to ${m.to}`).join(', '));

  await axeMatrix(browser, results.map(({ lang, surgeUrl }) => ({ lang, url: surgeUrl })), shotDir);
  await server.stop();
}

// Alone: `node tests/browser/surge.mjs` (after `cargo test --no-run`), like e2e.mjs finds its parts.
if (isMain(import.meta.url)) await runAlone('surge', surgeFlow);
