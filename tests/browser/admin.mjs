// The admin page (docs/operations.md, "The admin page") in Chromium with JavaScript off: a
// server with two lists, the metrics listener and two [[api_tokens]] entries (ops: admin,
// reader: read), `resend_cooldown = "3s"` so a re-send can be both refused as too soon and
// queued within a few seconds. GET /admin on the metrics listener without credentials is 401
// with the Basic challenge (Chromium, with nothing to answer it with, shows no page), with the
// read token 403, with the admin token 200 (the pages' CSP, no script, the stylesheets
// applied); the public listener has no /admin. Real signups (ann on both lists, confirmed from
// the mail's link; bob on news, left pending), then, in the page: a search by the "Look up"
// button ("Record of …", "List news: confirmed"), an unknown address ("Nothing is held"),
// bob's pending row and its re-send button (refused as too soon while the page's
// "Confirmation sent" plus the cooldown is ahead, queued once the time the notice names has
// passed, and the new confirmation mail arrives with a new link), ann removed from news with
// "Not me" (the notice, then her record with a not_me suppression and no news row). Forged
// posts: a form on another loopback origin (127.0.0.1 on another port, same-site; localhost,
// cross-site) carrying the real page's hidden fields, form token included, pressed in the
// signed-in browser is 403 "nothing was done" and bob stays pending; a post with a wrong form
// token is 403 too; and the very fields of the foreign form, posted without Origin (as curl
// would), do remove bob: only where they came from was refused. Then axe-core on the page
// before a search, on both records and on a notice (a removal for an address nothing is held
// about) in light and dark colour scheme at 375 and 1280 px, no horizontal scroll,
// screenshots to target/browser-screenshots/admin-<theme>-<width>.png (ann's record: a
// confirmed row and the suppressions table), admin-pending-… (bob's), admin-notice-… and
// admin-search-… (no record).
// e2e.mjs runs it after surge mode; `node tests/browser/admin.mjs` runs it alone.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { THEMES, VIEWPORTS } from './a11y.mjs';
import { describeViolations, runAxe } from './lib/axe.mjs';
import { check, ok, sleep } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { checkHeaders, navigateBy } from './lib/page.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { startServer } from './lib/server.mjs';

const COOLDOWN_SECS = 3;
const ADMIN_LISTS = [
  { id: 'news', name: 'News' },
  { id: 'club', name: 'Reading Club' },
];
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';

// A token file as `signupd gen-secret` would write one: 64 printable characters and a newline.
function tokenFile(dir, name) {
  const token = crypto.randomBytes(32).toString('hex');
  const file = path.join(dir, `${name}.token`);
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, file };
}

const basic = (password) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`;

async function postSignup(base, fields) {
  const answer = await fetch(`${base}/api/signup`, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
  return answer.status;
}

// A browser context with JavaScript off, as jsOffPage makes one, but signed in: Playwright
// answers the Basic challenge with `credentials`, as a person would in the browser's prompt.
async function adminPage(browser, label, credentials) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false, httpCredentials: credentials });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  const consoleErrors = [];
  // Chromium logs "Failed to load resource" for every 4xx page, the intended 403s among them.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
  });
  page.on('requestfailed', (request) => consoleErrors.push(`${request.failure()?.errorText} ${request.url()}`));
  await page.setContent('<title>before</title><script>document.title = "after"</script>');
  check((await page.title()) === 'before', `${label}: JavaScript is off in the browser context (a <script> does not run)`);
  return { context, page, consoleErrors };
}

// Fills the email field and presses "Look up"; checks the answer is a page (200, no redirect)
// with the pages' headers and the record's heading.
async function lookUp(page, email, where) {
  await page.getByLabel('Email address', { exact: true }).fill(email);
  const response = await navigateBy(page, () => page.getByRole('button', { name: 'Look up', exact: true }).click());
  check(
    response.status() === 200 && new URL(page.url()).pathname === '/admin/search',
    `${where}: "Look up" answers 200 at /admin/search (a page, no redirect)`,
    `${response.status()} at ${page.url()}`,
  );
  checkHeaders(response, where);
  const h2 = await page.locator('h2').allInnerTexts();
  check(h2.length === 1 && h2[0] === `Record of ${email}`, `${where}: "Record of ${email}"`, JSON.stringify(h2));
  return response;
}

// The h3 of each list section ("List news: confirmed").
async function rowHeadings(page) {
  return page.locator('section.row h3').allInnerTexts();
}

// The role=status notice, or '' when there is none.
async function notice(page) {
  const status = page.getByRole('status');
  return (await status.count()) === 1 ? (await status.innerText()).trim() : '';
}

// The "Confirmation sent" time of the `list` row, in seconds.
async function confirmationSent(page, list) {
  const heading = page.getByRole('heading', { name: new RegExp(`^List ${list}:`) });
  const section = page.locator('section.row').filter({ has: heading });
  const fact = section.locator('dt', { hasText: /^Confirmation sent$/ }).locator('xpath=following-sibling::dd');
  const text = (await fact.innerText()).trim();
  const at = Date.parse(text);
  check(Number.isFinite(at), `admin: the ${list} row shows when its confirmation was sent (${text})`);
  return at / 1000;
}

// GET /admin without credentials, with the read token; the public listener.
async function checkSignIn(browser, server, tokens) {
  const url = `${server.metricsBase}/admin`;
  {
    // Chromium with no credentials to give cancels the challenge: no page, an auth error.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const failure = await page.goto(url).then(
      (response) => `a ${response.status()} page`,
      (error) => error.message,
    );
    check(/ERR_INVALID_AUTH_CREDENTIALS/.test(failure), 'admin without credentials: Chromium is challenged and shows no page', failure);
    await context.close();
    const answer = await fetch(url);
    const challenge = answer.headers.get('www-authenticate');
    check(answer.status === 401, 'admin without credentials: GET /admin is 401', String(answer.status));
    check(challenge === 'Basic realm="signupd admin", charset="UTF-8"', `admin without credentials: the challenge ${challenge}`, challenge);
    check(!(await answer.text()).includes('<h1>'), 'admin without credentials: nothing of the page in the answer');
  }
  {
    const { context, page } = await adminPage(browser, 'admin with the read token', { username: 'reader', password: tokens.reader });
    const response = await page.goto(url);
    check(response.status() === 403, 'admin with the read token: GET /admin is 403', String(response.status()));
    check((await response.text()).includes('admin scope'), 'admin with the read token: says the token lacks the admin scope');
    await context.close();
  }
  const publicAnswer = await fetch(`${server.base}/admin`, { headers: { authorization: basic(tokens.admin) } });
  check(publicAnswer.status === 404, 'admin: GET /admin on the public listener is 404, even signed in', String(publicAnswer.status));
}

// Ann on both lists, confirmed from the mail's link; bob on news, pending, his mail out.
async function signups(server, seen) {
  const { base, mailDir } = server;
  for (const [email, list] of [[ANN, 'news'], [ANN, 'club'], [BOB, 'news']]) {
    check((await postSignup(base, { email, consent: 'yes', list })) === 303, `admin: signup of ${email} on ${list} accepted`);
  }
  // The two lists share a sender, so one mail asks for both and its one link confirms both
  // (the page shows both confirmed, removeFlow checks).
  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, ANN);
  const token = new URL(mail.link).searchParams.get('token');
  const confirmed = await fetch(`${base}/api/confirm`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
  check(confirmed.status === 303, `admin: ann confirmed from the link of ${mail.file}`);
  return waitForMailLink(mailDir, base, '/confirm', seen, BOB);
}

// Presses bob's re-send button; the answer must be what the clock allows: refused as too soon
// while the page's "Confirmation sent" plus the cooldown is ahead, queued once it has passed
// (the server's clock counts whole seconds; within the second of the press, either).
async function pressResend(page, sentAt, where) {
  const button = page.getByRole('button', { name: 'Re-send the confirmation for news', exact: true });
  check((await button.count()) === 1, `${where}: bob's pending row has a "Re-send the confirmation for news" button`);
  const before = Math.floor(Date.now() / 1000);
  const response = await navigateBy(page, () => button.click());
  const after = Math.floor(Date.now() / 1000);
  check(
    response.status() === 200 && new URL(page.url()).pathname === '/admin/resend',
    `${where}: the re-send answers 200 at /admin/resend (a page, no redirect)`,
    `${response.status()} at ${page.url()}`,
  );
  const text = await notice(page);
  const due = sentAt + COOLDOWN_SECS;
  let kind = 'other';
  if (text.startsWith('A new confirmation for news is queued')) kind = 'queued';
  else if (text.startsWith('Nothing sent: a confirmation went out less than signup.resend_cooldown ago')) kind = 'too soon';
  let expected = 'too soon or queued';
  if (after < due) expected = 'too soon';
  else if (before >= due) expected = 'queued';
  check(kind !== 'other' && expected.includes(kind), `${where}: the notice (role=status) says ${kind}, as the clock expects (${expected}): ${JSON.stringify(text)}`, text);
  if (kind === 'too soon') {
    const next = /the next may go at (\S+)\.$/.exec(text)?.[1];
    check(
      Date.parse(next) / 1000 === due,
      `${where}: it names when the next may go (${next}): the time sent plus ${COOLDOWN_SECS} s`,
      `${next} vs ${new Date(due * 1000).toISOString()}`,
    );
  }
  return { kind, due };
}

// Bob's re-send: once too soon, once queued (in either order), and the queued mail arrives.
async function resendFlow(page, server, seen, firstMail) {
  await lookUp(page, BOB, 'admin search bob');
  const headings = await rowHeadings(page);
  check(JSON.stringify(headings) === '["List news: pending"]', 'admin search bob: "List news: pending"', JSON.stringify(headings));
  let lastLink = firstMail.link;
  const kinds = new Set();
  for (let round = 1; round <= 3 && kinds.size < 2; round += 1) {
    const where = `admin re-send ${round}`;
    const { kind, due } = await pressResend(page, await confirmationSent(page, 'news'), where);
    kinds.add(kind);
    if (kind === 'too soon') {
      // Until the time the notice named, as the server's clock counts it (whole seconds).
      while (Date.now() < due * 1000 + 50) await sleep(50);
    } else {
      const mail = await waitForMailLink(server.mailDir, server.base, '/confirm', seen, BOB);
      check(mail.link !== lastLink, `${where}: a new confirmation mail for bob arrives (${mail.file}), with a new link`);
      lastLink = mail.link;
      // The record again, with the new mail's time.
      await lookUp(page, BOB, `${where}: search bob`);
    }
  }
  check(kinds.has('too soon') && kinds.has('queued'), 'admin: the re-send was refused as too soon, and queued once the cooldown had passed', [...kinds].join(', '));
  check(JSON.stringify(await rowHeadings(page)) === '["List news: pending"]', 'admin: bob is still pending after the re-sends');
}

// Ann removed from news with "Not me": the notice, then her record.
async function removeFlow(page) {
  await lookUp(page, ANN, 'admin search ann');
  const headings = (await rowHeadings(page)).sort();
  check(
    JSON.stringify(headings) === JSON.stringify(['List club: confirmed', 'List news: confirmed']),
    'admin search ann: "List news: confirmed" and "List club: confirmed"',
    JSON.stringify(headings),
  );
  await page.getByLabel('From', { exact: true }).selectOption('news');
  await page.getByRole('radio', { name: /^Not me\b/ }).check();
  const response = await navigateBy(page, () => page.getByRole('button', { name: 'Remove', exact: true }).click());
  check(
    response.status() === 200 && new URL(page.url()).pathname === '/admin/remove',
    'admin remove ann: "Remove" answers 200 at /admin/remove (a page, no redirect)',
    `${response.status()} at ${page.url()}`,
  );
  checkHeaders(response, 'admin remove ann');
  const text = await notice(page);
  check(text.startsWith('Removed from news (not_me)'), `admin remove ann: the notice (role=status) ${JSON.stringify(text)}`, text);

  await lookUp(page, ANN, 'admin search ann again');
  const after = await rowHeadings(page);
  check(JSON.stringify(after) === '["List club: confirmed"]', 'admin search ann again: no news row, club still confirmed', JSON.stringify(after));
  const rows = await page.getByRole('region', { name: 'Suppressions' }).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())),
  );
  check(
    rows.length === 1 && rows[0][0] === 'news' && rows[0][1] === 'not_me',
    'admin search ann again: the suppressions table has the row news, not_me',
    JSON.stringify(rows),
  );
}

// A site on another origin: one page with a form that posts `fields` to `action`, as a forged
// request from a page the operator visits while signed in would.
function startForeignSite(action, fields) {
  const escape = (value) => value.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  const inputs = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${name}" value="${escape(value)}">`);
  const html = [
    '<!doctype html><html lang="en"><title>Win a prize</title>',
    `<form method="post" action="${action}">`,
    ...inputs,
    '<button type="submit">Claim</button></form></html>',
  ].join('\n');
  const site = http.createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  return new Promise((resolve, reject) => {
    site.on('error', reject);
    site.listen(0, '127.0.0.1', () => resolve(site));
  });
}

// Forged posts: the remove form's real fields for bob, pressed from pages on other origins.
async function foreignOriginFlow(page, server, tokens) {
  await lookUp(page, BOB, 'admin search bob before the forged posts');
  const form = page.locator('form[action="/admin/remove"]');
  const fields = {
    form: await form.locator('input[name="form"]').inputValue(),
    email: await form.locator('input[name="email"]').inputValue(),
    list: 'news',
    reason: 'unsubscribed',
  };
  check(fields.form.length > 20 && fields.email === BOB, "admin: the remove form carries a form token and bob's address");
  const site = await startForeignSite(`${server.metricsBase}/admin/remove`, fields);
  try {
    const { port } = site.address();
    // 127.0.0.1 on another port is the same site (ports do not count), localhost another one.
    for (const [origin, kind] of [[`http://127.0.0.1:${port}`, 'same-site'], [`http://localhost:${port}`, 'cross-site']]) {
      const where = `admin forged post from ${origin}`;
      const landing = await page.goto(`${origin}/`);
      check(landing.status() === 200, `${where}: the foreign page loads`);
      const response = await navigateBy(page, () => page.getByRole('button', { name: 'Claim' }).click());
      const sent = await response.request().allHeaders();
      check(
        sent.origin === origin && sent['sec-fetch-site'] === kind,
        `${where}: Chromium sent Origin ${origin} and Sec-Fetch-Site ${kind}`,
        `origin=${sent.origin} sec-fetch-site=${sent['sec-fetch-site']}`,
      );
      const body = await response.text();
      check(response.status() === 403 && body.includes('nothing was done'), `${where}: 403 "nothing was done"`, `${response.status()} ${body}`);
    }
  } finally {
    await new Promise((resolve) => site.close(resolve));
  }
  await page.goto(`${server.metricsBase}/admin`);
  await lookUp(page, BOB, 'admin search bob after the forged posts');
  check(JSON.stringify(await rowHeadings(page)) === '["List news: pending"]', 'admin: bob is still pending after the forged posts');

  // Posts as curl makes them: the credentials, no Origin, no Sec-Fetch-Site.
  const post = (route, body) =>
    fetch(`${server.metricsBase}${route}`, {
      method: 'POST',
      headers: { authorization: basic(tokens.admin), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
      redirect: 'manual',
    });
  const wrongToken = `${fields.form[0] === 'A' ? 'B' : 'A'}${fields.form.slice(1)}`;
  const wrong = await post('/admin/remove', { ...fields, form: wrongToken });
  check(wrong.status === 403 && (await wrong.text()).includes('nothing was done'), 'admin: a post with a wrong form token is 403 "nothing was done"');
  return { fields, post };
}

async function axeMatrix(browser, server, tokens, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  const problems = [];
  // The page before a search; ann's record (a confirmed row, the suppressions table); bob's (a
  // pending row with its re-send button); a notice: "Remove" for an address nothing is held
  // about, which changes nothing and so answers the same in every combination. `name` is the
  // screenshot's, ann's has none. (axe runs in contexts with JavaScript on, as in status.mjs:
  // its promise never settles where scripts are off; the page's CSP still forbids scripts.)
  const views = [
    { name: 'search', email: null },
    { name: null, email: ANN },
    { name: 'pending', email: BOB },
    { name: 'notice', email: 'nobody@example.com', remove: true },
  ];
  for (const theme of THEMES) {
    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ colorScheme: theme, viewport, httpCredentials: { username: 'ops', password: tokens.admin } });
      const page = await context.newPage();
      for (const view of views) {
        const where = `admin ${view.name || 'record'} ${theme} ${viewport.width}px`;
        const response = await page.goto(`${server.metricsBase}/admin`);
        check(response.status() === 200, `${where}: 200`);
        if (view.email) await lookUp(page, view.email, where);
        if (view.remove) {
          await navigateBy(page, () => page.getByRole('button', { name: 'Remove', exact: true }).click());
          const text = await notice(page);
          check(text.startsWith('Nothing to remove'), `${where}: the notice ${JSON.stringify(text)}`, text);
        }
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
        const result = await runAxe(page);
        const lines = describeViolations(result.violations).map((line) => `${where}: ${line}`);
        problems.push(...lines);
        const shot = path.join(shotDir, `admin-${view.name ? `${view.name}-` : ''}${theme}-${viewport.width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        if (lines.length === 0) ok(`${where}: axe ${result.ran} rules, no violation`);
        else console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
      }
      await context.close();
    }
  }
  return problems;
}

// The whole module: its own server (two lists, the metrics listener, two API tokens), checks.
export async function adminFlow(browser, binary, tmp, shotDir) {
  const dir = path.join(tmp, 'admin');
  fs.mkdirSync(dir, { recursive: true });
  const admin = tokenFile(dir, 'ops');
  const reader = tokenFile(dir, 'reader');
  const tokens = { admin: admin.token, reader: reader.token };
  const server = await startServer(binary, dir, 'admin server', ADMIN_LISTS, {
    signup: [`resend_cooldown = "${COOLDOWN_SECS}s"`],
    metrics: true,
    extra: [
      '[[api_tokens]]',
      'name = "ops"',
      `token_file = ${JSON.stringify(admin.file)}`,
      'scopes = ["admin"]',
      '[[api_tokens]]',
      'name = "reader"',
      `token_file = ${JSON.stringify(reader.file)}`,
      'scopes = ["read"]',
    ],
  });
  await checkSignIn(browser, server, tokens);
  const seen = new Set();
  const bobMail = await signups(server, seen);

  const { context, page, consoleErrors } = await adminPage(browser, 'admin signed in', { username: 'ops', password: tokens.admin });
  const where = 'admin (JavaScript off)';
  const response = await page.goto(`${server.metricsBase}/admin`);
  check(response.status() === 200, `${where}: GET /admin with the admin token is 200`, String(response.status()));
  checkHeaders(response, where);
  const csp = response.headers()['content-security-policy'] || '';
  check(csp.startsWith("default-src 'none'"), `${where}: the pages' CSP`, csp);
  check(!/<script/i.test(await page.content()), `${where}: no script`);
  const h1 = await page.locator('h1').allInnerTexts();
  check(h1.length === 1 && h1[0] === 'signupd admin', `${where}: h1 "signupd admin"`, JSON.stringify(h1));
  check((await page.locator('main').innerText()).includes('Signed in with the token ops'), `${where}: names the token signed in with`);
  const styled = await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth);
  check(styled !== 'none', `${where}: the stylesheets loaded under the CSP (main max-width ${styled})`);

  await lookUp(page, 'nobody@example.com', 'admin search nobody');
  check((await page.locator('main').innerText()).includes('Nothing is held about this address.'), 'admin search nobody: "Nothing is held about this address."');
  check((await rowHeadings(page)).length === 0, 'admin search nobody: no list section');

  await resendFlow(page, server, seen, bobMail);
  await removeFlow(page);
  const forged = await foreignOriginFlow(page, server, tokens);
  check(consoleErrors.length === 0, 'admin: no console errors (CSP violations)', consoleErrors.join(' | '));
  await context.close();

  const problems = await axeMatrix(browser, server, tokens, shotDir);
  check(problems.length === 0, 'admin: axe found no violation', `${problems.length} violation(s):\n  ${problems.join('\n  ')}`);
  ok(`admin: screenshots in ${shotDir}`);

  // The control for the forged posts: the very fields the foreign form carried, posted with the
  // credentials and without Origin, remove bob; the 403s were for where they came from.
  const control = await forged.post('/admin/remove', forged.fields);
  const controlText = await control.text();
  check(
    control.status === 200 && controlText.includes('Removed from news (unsubscribed)'),
    "admin: the foreign form's fields, posted without Origin, remove bob (so the 403s were for the origin)",
    `${control.status} ${controlText.slice(0, 300)}`,
  );
  await server.stop();
}

// Alone: `node tests/browser/admin.mjs` (after `cargo build`), like e2e.mjs finds its parts.
if (isMain(import.meta.url)) await runAlone('admin', adminFlow);
