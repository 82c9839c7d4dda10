// The admin page (docs/operations.md, "The admin page") in Chromium: a server with the metrics
// listener and two tokens (`ops` with the admin scope, `reader` with read only) gets two real
// signups, one confirmed from its mail's link and one left pending. No credentials is 401 with
// a Basic challenge; with JavaScript off, the read token is 403; signed in with the admin token (the browser answers
// the Basic challenge) the page searches an address and shows its record, re-sends the pending
// one's confirmation (a new mail arrives), and removes the confirmed one as "not me" (its record
// then shows the suppression); a form on another origin that posts to /admin/remove, even with
// the page's own form token, is refused with 403 and the address stays. Then axe-core on a
// record in light and dark colour scheme at 375 and 1280 px, and screenshots to
// target/browser-screenshots/admin-<theme>-<width>.png.
// e2e.mjs runs it after surge mode; `node tests/browser/admin.mjs` runs it alone.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { THEMES, VIEWPORTS } from './a11y.mjs';
import { describeViolations, runAxe } from './lib/axe.mjs';
import { check, ok, sleep } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { navigateBy } from './lib/page.mjs';
import { startServer } from './lib/server.mjs';

const ADMIN = 'admin-token-for-the-browser-test-cccccccccccccccccccccc';
const READER = 'reader-token-for-the-browser-test-aaaaaaaaaaaaaaaaaaaaa';

async function postSignup(base, email) {
  const answer = await fetch(`${base}/api/signup`, {
    method: 'POST',
    body: new URLSearchParams({ email, consent: 'yes', list: 'news' }),
    redirect: 'manual',
  });
  check(answer.status === 303, `admin: signup of ${email} accepted`, String(answer.status));
}

// Types `email` into the search and presses "Look up"; the record's page.
async function search(page, metricsBase, email) {
  if (!page.url().startsWith(`${metricsBase}/admin`)) await page.goto(`${metricsBase}/admin`);
  await page.getByLabel('Email address').fill(email);
  const response = await navigateBy(page, () => page.getByRole('button', { name: 'Look up' }).click());
  check(response.status() === 200, `admin: the search for ${email} answers 200`, String(response.status()));
  return page.content();
}

// A page on another origin with a form that posts `fields` to the admin page, as a forged
// request from a site the operator visits would.
function foreignSite(target, fields) {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
    .join('');
  const html = `<!doctype html><html lang="en"><title>elsewhere</title><form method="post" action="${target}">${inputs}<button>Win a prize</button></form></html>`;
  const server = http.createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(html));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function withoutJavaScript(browser, server) {
  const { metricsBase, base, mailDir } = server;
  // Chromium without credentials to give cancels the challenge (ERR_INVALID_AUTH_CREDENTIALS),
  // so the challenge itself is read with fetch.
  const refused = await fetch(`${metricsBase}/admin`);
  check(refused.status === 401, 'admin: without credentials 401', String(refused.status));
  check((refused.headers.get('www-authenticate') || '').startsWith('Basic realm="signupd admin"'), 'admin: a Basic challenge');
  const reader = await browser.newContext({ javaScriptEnabled: false, httpCredentials: { username: 'me', password: READER } });
  const forbidden = await (await reader.newPage()).goto(`${metricsBase}/admin`);
  check(forbidden.status() === 403, 'admin: a token without the admin scope is 403', String(forbidden.status()));
  await reader.close();

  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 800 },
    httpCredentials: { username: 'me', password: ADMIN },
  });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  const response = await page.goto(`${metricsBase}/admin`);
  check(response.status() === 200, 'admin: the admin token signs in (200)', String(response.status()));
  const headers = response.headers();
  check((headers['content-security-policy'] || '').startsWith("default-src 'none'"), "admin: the pages' CSP", JSON.stringify(headers));
  check(headers['cache-control'] === 'no-store', 'admin: no-store');
  const h1 = await page.locator('h1').allInnerTexts();
  check(h1.length === 1 && h1[0] === 'signupd admin', 'admin: h1 "signupd admin"', JSON.stringify(h1));
  check(!/<script/i.test(await page.content()), 'admin: no script');
  const styled = await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth);
  check(styled !== 'none', `admin: the stylesheets loaded under the CSP (main max-width ${styled})`);
  const publicAnswer = await fetch(`${base}/admin`, { headers: { authorization: `Basic ${btoa(`me:${ADMIN}`)}` } });
  check(publicAnswer.status === 404, 'admin: not on the public listener (404)', String(publicAnswer.status));

  // Search: a confirmed record, a pending one.
  let html = await search(page, metricsBase, 'Ann@Example.com');
  check(html.includes('Record of ann@example.com') && html.includes('List news: confirmed'), 'admin: ann is shown confirmed');
  html = await search(page, metricsBase, 'bob@example.com');
  check(html.includes('List news: pending'), 'admin: bob is shown pending');

  // Re-send bob's confirmation, past the cooldown of 1 s: a new mail with a new link.
  const seen = new Set(fs.readdirSync(mailDir));
  await sleep(1100);
  await navigateBy(page, () => page.getByRole('button', { name: 'Re-send the confirmation for news' }).click());
  const notice = await page.getByRole('status').innerText();
  check(notice.includes('A new confirmation for news is queued'), 'admin: the re-send is queued', notice);
  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, 'bob@example.com');
  check(Boolean(mail.link), 'admin: a new confirmation mail for bob arrived');

  // A forged post from another origin, with the page's own form token: refused, bob stays.
  html = await search(page, metricsBase, 'bob@example.com');
  const formToken = await page.locator('form[action="/admin/remove"] input[name="form"]').getAttribute('value');
  const site = await foreignSite(`${metricsBase}/admin/remove`, {
    form: formToken,
    email: 'bob@example.com',
    list: '',
    reason: 'not_me',
  });
  const elsewhere = `http://127.0.0.1:${site.address().port}/`;
  const attacker = await context.newPage();
  await attacker.goto(elsewhere);
  const forged = await navigateBy(attacker, () => attacker.getByRole('button', { name: 'Win a prize' }).click());
  check(forged.status() === 403, 'admin: a post from another origin is 403', String(forged.status()));
  check((await attacker.content()).includes('nothing was done'), 'admin: and says nothing was done');
  await attacker.close();
  site.close();
  html = await search(page, metricsBase, 'bob@example.com');
  check(html.includes('List news: pending'), 'admin: bob is still pending after the forged post');

  // Remove ann as "not me": the record then shows the suppression and no row.
  await search(page, metricsBase, 'ann@example.com');
  await page.getByLabel(/^Not me/).check();
  await navigateBy(page, () => page.getByRole('button', { name: 'Remove', exact: true }).click());
  const removed = await page.getByRole('status').innerText();
  check(removed.includes('Removed from news (not_me)'), 'admin: ann removed as not_me', removed);
  html = await search(page, metricsBase, 'ann@example.com');
  check(html.includes('<td>not_me</td>') && !html.includes('List news: confirmed'), 'admin: her record shows the suppression and no row');

  check(consoleErrors.length === 0, 'admin: no console errors (CSP violations)', consoleErrors.join(' | '));
  await context.close();
}

async function axeMatrix(browser, server, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  const problems = [];
  for (const theme of THEMES) {
    for (const viewport of VIEWPORTS) {
      const where = `admin ${theme} ${viewport.width}px`;
      const context = await browser.newContext({ colorScheme: theme, viewport, httpCredentials: { username: 'me', password: ADMIN } });
      const page = await context.newPage();
      // Bob's record: a pending row with its re-send button, queued mail, the removal form.
      const html = await search(page, server.metricsBase, 'bob@example.com');
      check(html.includes('List news: pending'), `${where}: bob's record`);
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
      const result = await runAxe(page);
      const lines = describeViolations(result.violations).map((line) => `${where}: ${line}`);
      problems.push(...lines);
      await page.screenshot({ path: path.join(shotDir, `admin-${theme}-${viewport.width}.png`), fullPage: true });
      if (lines.length === 0) ok(`${where}: axe ${result.ran} rules, no violation`);
      else console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
      await context.close();
    }
  }
  check(problems.length === 0, 'admin: axe found no violation', `${problems.length} violation(s):\n  ${problems.join('\n  ')}`);
  ok(`admin: screenshots in ${shotDir}`);
}

// The whole module: its own server (one list, the metrics listener, two tokens), signups, checks.
export async function adminFlow(browser, binary, tmp, shotDir) {
  const dir = path.join(tmp, 'admin');
  fs.mkdirSync(dir, { recursive: true });
  const tokenFile = (name, token) => {
    const file = path.join(dir, `${name}.token`);
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return file;
  };
  const tokens = [
    ['ops', tokenFile('ops', ADMIN), 'admin'],
    ['reader', tokenFile('reader', READER), 'read'],
  ].flatMap(([name, file, scope]) => ['[[api_tokens]]', `name = "${name}"`, `token_file = ${JSON.stringify(file)}`, `scopes = ["${scope}"]`]);
  const server = await startServer(binary, dir, 'admin server', [{ id: 'news', name: 'News' }], {
    signup: ['resend_cooldown = "1s"'],
    metrics: true,
    extra: tokens,
  });
  const seen = new Set();
  await postSignup(server.base, 'ann@example.com');
  await postSignup(server.base, 'bob@example.com');
  const mail = await waitForMailLink(server.mailDir, server.base, '/confirm', seen, 'ann@example.com');
  const token = new URL(mail.link).searchParams.get('token');
  const confirmed = await fetch(`${server.base}/api/confirm`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
  check(confirmed.status === 303, 'admin: ann confirmed from the mail link');
  await waitForMailLink(server.mailDir, server.base, '/confirm', seen, 'bob@example.com');
  await withoutJavaScript(browser, server);
  await axeMatrix(browser, server, shotDir);
  await server.stop();
}

// Alone: `node tests/browser/admin.mjs` (after `cargo build`), like e2e.mjs finds its parts.
if (isMain(import.meta.url)) await runAlone('admin', adminFlow);
