// The status page (docs/operations.md, "The status page") in Chromium: a server with the metrics
// listener gets real traffic (accepted signups on two lists, refusals of three outcomes — an
// invalid address, a missing consent, the rate limit — a surge alert, a confirmation from the
// mail's link, the mails the worker sends); once the rollup worker has stored it, GET /status on
// the metrics listener is loaded with JavaScript off (the pages' CSP, no script, an SVG chart
// with a name for each series and a table of numbers under each), both ranges; then axe-core in
// light and dark colour scheme at 375 and 1280 px, and screenshots to
// target/browser-screenshots/status-<range>-<theme>-<width>.png.
// e2e.mjs runs it after the accessibility matrix (which empties the screenshot folder first);
// `node tests/browser/status.mjs` runs it alone.

import fs from 'node:fs';
import path from 'node:path';

import { THEMES, VIEWPORTS } from './a11y.mjs';
import { describeViolations, runAxe } from './lib/axe.mjs';
import { check, ok, sleep } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { startServer } from './lib/server.mjs';

const STORED_CAP_MS = 40_000;
const RANGES = ['48h', '30d'];

async function postSignup(base, fields) {
  const answer = await fetch(`${base}/api/signup`, {
    method: 'POST',
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
  return answer.status;
}

// The number in the totals cell of `series` in the section of `list`, or null.
function total(html, list, series) {
  const start = html.indexOf(`id="list-${list}"`);
  if (start < 0) return null;
  const section = html.slice(start, html.indexOf('</section>', start));
  const match = section.match(new RegExp(`data-series="${series.replace('.', '\\.')}">([^<]*)<`));
  return match ? match[1] : null;
}

// Real traffic; returns what the page must show once stored.
async function traffic(server) {
  const { base, mailDir } = server;
  // ann and bob from the footer form, cat without a source.
  for (const [email, source] of [['ann@example.com', 'footer'], ['bob@example.com', 'footer'], ['cat@example.com', '']]) {
    check((await postSignup(base, { email, consent: 'yes', list: 'news', source })) === 303, `status: signup of ${email} accepted`);
  }
  check((await postSignup(base, { email: 'dan@example.com', consent: 'yes', list: 'club' })) === 303, 'status: signup on club accepted');
  check((await postSignup(base, { email: 'not-an-address', consent: 'yes', list: 'news' })) === 400, 'status: an invalid address refused');
  check((await postSignup(base, { email: 'eve@example.com', list: 'club' })) === 400, 'status: a signup without consent refused');
  let limited = 0;
  for (let n = 0; n < 4; n += 1) {
    if ((await postSignup(base, { email: `flood${n}@example.com`, consent: 'yes', list: 'news' })) === 429) limited += 1;
  }
  check(limited > 0, `status: the rate limit refused ${limited} of 4 more signups`);
  const mail = await waitForMailLink(mailDir, base, '/confirm', new Set(), 'ann@example.com');
  const token = new URL(mail.link).searchParams.get('token');
  const confirmed = await fetch(`${base}/api/confirm`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
  check(confirmed.status === 303, 'status: ann confirmed from the mail link');
  return { accepted: String(3 + (4 - limited)), limited: String(limited) };
}

async function checkWithoutJavaScript(browser, server, expected) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  for (const range of RANGES) {
    const where = `status ${range} (JavaScript off)`;
    const response = await page.goto(`${server.metricsBase}/status?range=${range}`);
    check(response.status() === 200, `${where}: 200 on the metrics listener`);
    const headers = response.headers();
    check(
      (headers['content-security-policy'] || '').startsWith("default-src 'none'") && headers['cache-control'] === 'no-store',
      `${where}: the pages' CSP and no-store`,
      JSON.stringify(headers),
    );
    const html = await page.content();
    check(!/<script/i.test(html), `${where}: no script`);
    const h1 = await page.locator('h1').allInnerTexts();
    check(h1.length === 1 && h1[0] === 'signupd status', `${where}: h1 "signupd status"`, JSON.stringify(h1));
    const charts = page.getByRole('img');
    const names = await charts.evaluateAll((svgs) =>
      svgs.map((svg) => svg.getAttribute('aria-labelledby').split(' ').map((id) => document.getElementById(id)?.textContent || '').join(' ')),
    );
    check(names.length === 10 && names.every((name) => name.trim().length > 20), `${where}: ${names.length} charts (three per list, four service-wide), each with a title and a description`);
    const tables = await page.locator('table').count();
    check(tables === 9, `${where}: ${tables} tables (two of numbers and one by source per list, three service-wide)`);
    // The table by source: footer's two signups with ann's confirmation, the rest without one.
    const sourceRow = async (key) =>
      page.locator(`#list-news tr[data-source="${key}"]`).evaluateAll((rows) => rows.map((row) => row.innerText.split('\t').join(' | ')));
    const footer = await sourceRow('footer');
    check(footer.length === 1 && footer[0] === 'footer | 2 | 1 | 50%', `${where}: news by source, footer 2 signups, 1 confirmation, 50%`, JSON.stringify(footer));
    const none = await sourceRow('(none)');
    const unsourced = String(Number(expected.accepted) - 2);
    check(none.length === 1 && none[0].startsWith(`No source | ${unsourced} | 0 |`), `${where}: news by source, ${unsourced} without a source`, JSON.stringify(none));
    const totals = await sourceRow('(total)');
    check(totals.length === 1 && totals[0].startsWith(`Total | ${expected.accepted} | 1 |`), `${where}: news by source, the totals are the list's`, JSON.stringify(totals));
    const header = await page.locator('#list-news table.sources th[scope="col"]').allInnerTexts();
    check(header.join(',') === 'Source,Accepted signups,Confirmations,Confirmation rate', `${where}: the table by source has its column headers`, header.join(','));
    check(total(html, 'news', 'signups.accepted') === expected.accepted, `${where}: news accepted ${expected.accepted}`, total(html, 'news', 'signups.accepted'));
    check(total(html, 'news', 'signups.rate_limited') === expected.limited, `${where}: news rate_limited ${expected.limited}`);
    check(total(html, 'news', 'confirmations') === '1', `${where}: news confirmations 1`);
    check((await page.locator('svg .threshold').count()) === 1, `${where}: the dashed budget line on the mail chart`);
    const styled = await page.evaluate(() => getComputedStyle(document.querySelector('main')).maxWidth);
    check(styled !== 'none', `${where}: the stylesheets loaded under the CSP (main max-width ${styled})`);
  }
  check(consoleErrors.length === 0, 'status: no console errors (CSP violations)', consoleErrors.join(' | '));
  // The public listener has no status page.
  const publicAnswer = await fetch(`${server.base}/status`);
  check(publicAnswer.status === 404, 'status: GET /status on the public listener is 404');
  await context.close();
}

async function axeMatrix(browser, server, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  const problems = [];
  for (const theme of THEMES) {
    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ colorScheme: theme, viewport });
      const page = await context.newPage();
      for (const range of RANGES) {
        const where = `status ${range} ${theme} ${viewport.width}px`;
        const response = await page.goto(`${server.metricsBase}/status?range=${range}`);
        check(response.status() === 200, `${where}: 200`);
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
        // Every table open, so axe checks its cells too.
        await page.evaluate(() => document.querySelectorAll('details').forEach((details) => details.setAttribute('open', '')));
        const result = await runAxe(page);
        const lines = describeViolations(result.violations).map((line) => `${where}: ${line}`);
        problems.push(...lines);
        await page.evaluate(() => document.querySelectorAll('details').forEach((details) => details.removeAttribute('open')));
        const shot = path.join(shotDir, `status-${range}-${theme}-${viewport.width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        if (lines.length === 0) ok(`${where}: axe ${result.ran} rules, no violation`);
        else console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
      }
      await context.close();
    }
  }
  check(problems.length === 0, 'status: axe found no violation', `${problems.length} violation(s):\n  ${problems.join('\n  ')}`);
  ok(`status: screenshots in ${shotDir}`);
}

// The whole module: its own server (two lists, the metrics listener), traffic, checks.
export async function statusFlow(browser, binary, tmp, shotDir) {
  const server = await startServer(
    binary,
    path.join(tmp, 'status'),
    'status server',
    [
      { id: 'news', name: 'News' },
      { id: 'club', name: 'Reading Club' },
    ],
    { signup: ['rate_limits = [ { window = "10m", max = 5 } ]', 'surge_alert = { window = "10m", max = 2 }'], metrics: true },
  );
  const expected = await traffic(server);
  // The rollup worker stores on a tick of about 5 s.
  const deadline = Date.now() + STORED_CAP_MS;
  let html = '';
  while (Date.now() < deadline) {
    html = await (await fetch(`${server.metricsBase}/status`)).text();
    if (total(html, 'news', 'confirmations') === '1' && total(html, 'news', 'signups.accepted') === expected.accepted) break;
    await sleep(250);
  }
  check(total(html, 'news', 'confirmations') === '1', 'status: the rollup worker stored the traffic within 40 s');
  await checkWithoutJavaScript(browser, server, expected);
  await axeMatrix(browser, server, shotDir);
  await server.stop();
}

// Alone: `node tests/browser/status.mjs` (after `cargo build`), like e2e.mjs finds its parts.
if (isMain(import.meta.url)) await runAlone('status', statusFlow);
