// signupd in a real browser: Debian's Chromium (/usr/bin/chromium), driven by playwright-core,
// against target/debug/signupd serving on a free loopback port with the file mail transport.
// Signs up with the keyboard, confirms from the link in the .eml file, removes the address from
// the welcome mail's manage link, and checks the form's error state, <html lang>, the security
// headers of every page and the layout at phone width. No mocks, no fixed sleeps.
// Run by .ci/browser (it installs Chromium, runs npm ci and builds the binary). Prints one line
// per check and exits 1 at the first failure. SIGNUPD_BROWSER_KEEP=1 keeps the temp folder
// (config, data, mail, server log, screenshots); it is kept anyway after a failure.

import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const binary = process.env.SIGNUPD_BIN || path.join(root, 'target', 'debug', 'signupd');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
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
const READY_CAP_MS = 30_000;
const MAIL_CAP_MS = 20_000;
const EXIT_CAP_MS = 35_000;
const OVERALL_CAP_MS = 150_000;

class CheckFailed extends Error {}

let passed = 0;
let tmp;
let serverLog;
let server;
let serverExit;
let context;

function ok(name) {
  passed += 1;
  console.log(`ok   ${name}`);
}

function check(condition, name, detail) {
  if (!condition) throw new CheckFailed(detail === undefined ? name : `${name}: ${detail}`);
  ok(name);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// A cap for Promise.race that does not keep node alive once the race is decided.
const cap = (ms) => new Promise((resolve) => setTimeout(() => resolve(null), ms).unref());

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function tailOfLog(lines = 30) {
  try {
    return fs.readFileSync(serverLog, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server log)';
  }
}

// ---------------------------------------------------------------------------------------------
// Mail: a small MIME reader for the .eml files of the file transport.

function decodeQuotedPrintable(text) {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes = [];
  for (let i = 0; i < soft.length; i += 1) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'latin1'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseHeaders(block) {
  const headers = {};
  for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

// Returns the leaf parts of a message: [{ type, encoding, text }], bodies decoded.
function mimeParts(raw) {
  const normal = raw.replace(/\r\n/g, '\n');
  const split = normal.indexOf('\n\n');
  const headers = parseHeaders(split < 0 ? normal : normal.slice(0, split));
  const body = split < 0 ? '' : normal.slice(split + 2);
  const type = (headers['content-type'] || 'text/plain').split(';')[0].trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'])?.[1];
    if (!boundary) return [];
    return body
      .split(`--${boundary}`)
      .slice(1)
      .filter((chunk) => !chunk.startsWith('--'))
      .flatMap((chunk) => mimeParts(chunk.replace(/^\n/, '')));
  }
  const encoding = (headers['content-transfer-encoding'] || '7bit').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(body);
  else if (encoding === 'base64') text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return [{ type, encoding, text }];
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Polls the mail folder until a not-yet-seen .eml file has a plain-text part with a link to
// `${base}${route}?token=…`. Returns { file, link, encoding, htmlHasLink }.
async function waitForMailLink(mailDir, base, route, seen) {
  const pattern = new RegExp(`${escapeRegExp(base)}${escapeRegExp(route)}\\?token=[^\\s<>"']+`);
  const deadline = Date.now() + MAIL_CAP_MS;
  while (Date.now() < deadline) {
    const files = fs.existsSync(mailDir)
      ? fs.readdirSync(mailDir).filter((name) => name.endsWith('.eml') && !seen.has(name)).sort()
      : [];
    for (const name of files) {
      const parts = mimeParts(fs.readFileSync(path.join(mailDir, name), 'latin1'));
      const plain = parts.find((part) => part.type === 'text/plain');
      const link = plain && pattern.exec(plain.text)?.[0];
      if (link) {
        const html = parts.find((part) => part.type === 'text/html');
        const htmlHasLink = Boolean(html && html.text.replace(/&amp;/g, '&').includes(link));
        return { file: name, link, encoding: plain.encoding, htmlHasLink };
      }
    }
    await sleep(100);
  }
  const present = fs.existsSync(mailDir) ? fs.readdirSync(mailDir).join(', ') : '(no mail folder)';
  throw new CheckFailed(
    `no new .eml with a ${route} link in ${mailDir} within ${MAIL_CAP_MS / 1000} s (files: ${present || 'none'})`,
  );
}

// ---------------------------------------------------------------------------------------------
// Page checks.

function checkHeaders(response, label) {
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

async function checkLang(page, label) {
  const lang = await page.evaluate(() => document.documentElement.getAttribute('lang'));
  check(Boolean(lang && lang.trim()), `${label}: <html lang="${lang}">`, `lang attribute is ${JSON.stringify(lang)}`);
}

async function checkPage(page, response, label, { status, pathname, search, heading }) {
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

// Clicks/presses and waits for the resulting main-frame navigation; returns its final response.
async function navigateBy(page, action) {
  const navigation = page.waitForNavigation({ waitUntil: 'load' });
  await action();
  return navigation;
}

async function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return null;
    return {
      tag: el.tagName.toLowerCase(),
      name: el.getAttribute('name'),
      type: el.getAttribute('type'),
      text: el.tagName === 'BUTTON' ? el.textContent.trim() : undefined,
    };
  });
}

function describe(el) {
  if (!el) return '(page)';
  if (el.tag === 'button') return `button "${el.text}"`;
  return `${el.tag}${el.type ? `[type=${el.type}]` : ''}${el.name ? `[name=${el.name}]` : ''}`;
}

async function startFromTop(page) {
  // Focus back at the start of the document, as after a fresh load.
  await page.evaluate(() => {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    window.getSelection()?.removeAllRanges();
  });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signupd-browser-'));
  console.log(`temp folder: ${tmp}`);
  check(fs.existsSync(binary), `signupd binary exists (${binary})`, `${binary} is missing; run cargo build --locked --bin signupd`);
  check(fs.existsSync(chromiumPath), `Chromium exists (${chromiumPath})`, 'install the Debian package chromium');

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = path.join(tmp, 'data');
  const mailDir = path.join(dataDir, 'mail');
  const configPath = path.join(tmp, 'signupd.toml');
  fs.writeFileSync(
    configPath,
    [
      '[server]',
      `listen = "127.0.0.1:${port}"`,
      `public_url = ${JSON.stringify(base)}`,
      '[storage]',
      `data_dir = ${JSON.stringify(dataDir)}`,
      '[mail]',
      `file_dir = ${JSON.stringify(mailDir)}`,
      '[[lists]]',
      'id = "news"',
      'name = "News"',
      '',
    ].join('\n'),
  );

  // ---- the server
  serverLog = path.join(tmp, 'signupd.log');
  const logFd = fs.openSync(serverLog, 'w');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SIGNUPD_')));
  server = spawn(binary, ['serve', '--config', configPath], { stdio: ['ignore', logFd, logFd], env });
  fs.closeSync(logFd);
  let exitInfo = null;
  serverExit = new Promise((resolve) => {
    server.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
    server.on('error', (error) => {
      exitInfo = { code: null, signal: null, error };
      resolve(exitInfo);
    });
  });

  const readyDeadline = Date.now() + READY_CAP_MS;
  let ready = false;
  let lastAnswer = 'no answer';
  while (!ready && !exitInfo && Date.now() < readyDeadline) {
    try {
      const answer = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      lastAnswer = `status ${answer.status}`;
      ready = answer.status === 200;
    } catch (error) {
      lastAnswer = error.cause?.code || error.message;
    }
    if (!ready) await sleep(100);
  }
  check(
    ready,
    `signupd serve is ready on ${base} (GET /readyz 200)`,
    exitInfo ? `signupd exited early (${JSON.stringify(exitInfo)})` : `not ready within ${READY_CAP_MS / 1000} s (${lastAnswer})`,
  );

  // ---- the browser
  context = await chromium.launchPersistentContext(path.join(tmp, 'chromium-profile'), {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    timeout: 30_000,
  });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = context.pages()[0] || (await context.newPage());
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
  ok(`Chromium ${context.browser()?.version() ?? ''} launched headless with a fresh profile`.replace('  ', ' '));

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

  // Tab through the whole page: focus must go email → consent → button, never to the honeypot.
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
  check(
    orderText === 'input[type=email][name=email] → input[type=checkbox][name=consent] → button "Sign up"',
    `GET /: Tab order is ${orderText}`,
    `expected email → consent → "Sign up"`,
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
  seen.add(confirmMail.file);
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
  seen.add(welcomeMail.file);
  ok(`welcome mail ${welcomeMail.file}: text part (${welcomeMail.encoding}) has the manage link`);
  check(welcomeMail.htmlHasLink, 'welcome mail: the HTML part has the same manage link');

  response = await page.goto(welcomeMail.link);
  await checkPage(page, response, 'GET /manage', { status: 200, pathname: '/manage', search: new URL(welcomeMail.link).search });
  const removeButton = page.getByRole('button', { name: 'Remove my address', exact: true });
  check(await removeButton.isVisible(), 'GET /manage: shows a "Remove my address" button');
  response = await navigateBy(page, () => removeButton.click());
  await checkPage(page, response, 'remove (click)', { status: 200, pathname: '/removed', search: '?list=news' });
  console.log(`     /removed says: ${JSON.stringify((await page.locator('main').innerText()).replace(/\s+/g, ' ').trim())}`);

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
  context = undefined;
  ok('Chromium closed');

  // ---- shutdown
  server.kill('SIGTERM');
  const exit = await Promise.race([serverExit, cap(EXIT_CAP_MS)]);
  check(exit !== null, `signupd exits within ${EXIT_CAP_MS / 1000} s of SIGTERM`);
  check(exit.code === 0, 'signupd exits 0 after SIGTERM', JSON.stringify(exit));
  server = undefined;
}

// Never leave the server behind, whatever ends this process.
process.on('exit', () => {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.log(`FAIL interrupted by ${signal}`);
    process.exit(1);
  });
}

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${OVERALL_CAP_MS / 1000} s`);
  if (server) server.kill('SIGKILL');
  console.log(`browser: ${passed} passed, 1 failed`);
  process.exit(1);
}, OVERALL_CAP_MS);

let failure = null;
try {
  await main();
} catch (error) {
  failure = error;
}
clearTimeout(watchdog);

if (context) await context.close().catch(() => {});
if (server && server.exitCode === null && server.signalCode === null) {
  server.kill('SIGTERM');
  const exited = await Promise.race([serverExit, cap(5000)]);
  if (!exited) server.kill('SIGKILL');
}

if (failure) {
  console.log(`FAIL ${failure instanceof CheckFailed ? failure.message : failure.stack || failure}`);
  if (serverLog) console.log(`--- last lines of ${serverLog}\n${tailOfLog()}\n---`);
  if (tmp) console.log(`temp folder kept: ${tmp}`);
  console.log(`browser: ${passed} passed, 1 failed`);
  process.exit(1);
}

if (process.env.SIGNUPD_BROWSER_KEEP) {
  console.log(`temp folder kept: ${tmp}`);
} else {
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`browser: ${passed} passed, 0 failed`);
