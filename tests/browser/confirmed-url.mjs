// A list's confirmed_url (SPEC §4.6) in Chromium with JavaScript off: the confirm POST answers
// 303 to a thank-you page on another origin, a small HTTP server of this test on another
// loopback port (in the list's allowed_origins). Browsers hold that redirect to the confirm
// page's CSP form-action, so the confirm page adds the origin there; the browser must land on
// the thank-you page (which must get the GET, with signup=confirmed added to its query) and
// report no CSP violation. A control run serves the same confirm page with the origin taken
// out of form-action again (as before the fix): Chromium then refuses the redirect, says so on
// the console, and the thank-you page gets nothing, so the checks above can see the failure.

import http from 'node:http';
import path from 'node:path';

import { check, ok } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { checkPage, jsOffPage, navigateBy } from './lib/page.mjs';
import { startServer } from './lib/server.mjs';

// A thank-you page on 127.0.0.1, any free port; records every request as "METHOD /path?query".
async function startThanksServer() {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><html lang="en"><title>Thanks</title><h1>Thank you</h1></html>');
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    requests,
    stop: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

// Signs `address` up through the hosted form and returns its confirm link.
async function signUpInBrowser(page, server, address, seen) {
  const response = await page.goto(`${server.base}/`);
  await checkPage(page, response, `confirmed_url: GET / (${address})`, { status: 200, pathname: '/', search: '' });
  await page.getByLabel('Email address', { exact: true }).fill(address);
  await page.locator('#consent').check();
  await navigateBy(page, () => page.getByRole('button', { name: 'Sign up', exact: true }).click());
  check(new URL(page.url()).pathname === '/check-inbox', `confirmed_url: ${address} signed up`, page.url());
  return (await waitForMailLink(server.mailDir, server.base, '/confirm', seen, address)).link;
}

export async function confirmedUrlFlow(browser, binary, dir) {
  const thanks = await startThanksServer();
  ok(`confirmed_url: thank-you server on ${thanks.origin}`);
  const confirmedUrl = `${thanks.origin}/thanks?from=signupd`;
  const landing = `${confirmedUrl}&signup=confirmed`;
  const server = await startServer(binary, path.join(dir, 'thanks'), 'confirmed_url server', [
    { id: 'shop', name: 'Shop News', allowed_origins: [thanks.origin], confirmed_url: confirmedUrl },
  ]);
  const seen = new Set();
  try {
    // ---- the confirm page allows the thank-you origin as a form target, and the browser gets there
    const { context, page, consoleErrors } = await jsOffPage(browser, 'confirmed_url');
    const link = await signUpInBrowser(page, server, 'thanks-reader@example.com', seen);
    let response = await page.goto(link);
    await checkPage(page, response, 'confirmed_url: GET /confirm', {
      status: 200,
      pathname: '/confirm',
      search: new URL(link).search,
      heading: 'Confirm your signup',
    });
    const csp = response.headers()['content-security-policy'] || '';
    check(
      / form-action 'self' http:\/\/127\.0\.0\.1:\d+;/.test(csp) && csp.includes(`form-action 'self' ${thanks.origin};`),
      `confirmed_url: the confirm page's form-action adds ${thanks.origin}`,
      csp,
    );
    response = await navigateBy(page, () => page.getByRole('button', { name: 'Confirm signup', exact: true }).click());
    check(
      response !== null && response.status() === 200 && page.url() === landing,
      `confirmed_url: the button press lands on ${landing}`,
      `got ${response?.status()} at ${page.url()}`,
    );
    check(
      (await page.getByRole('heading', { level: 1 }).innerText()) === 'Thank you',
      'confirmed_url: the browser shows the thank-you page',
    );
    const path_ = landing.slice(thanks.origin.length);
    check(
      thanks.requests.includes(`GET ${path_}`),
      `confirmed_url: the thank-you server got GET ${path_}`,
      JSON.stringify(thanks.requests),
    );
    check(consoleErrors.length === 0, 'confirmed_url: no CSP violation or other console error', consoleErrors.join(' | '));
    await context.close();

    // ---- control: the same page with the origin taken out of form-action again
    const control = await jsOffPage(browser, 'confirmed_url control');
    const controlLink = await signUpInBrowser(control.page, server, 'thanks-control@example.com', seen);
    await control.page.route('**/confirm?token=*', async (route) => {
      const answer = await route.fetch();
      const headers = { ...answer.headers() };
      headers['content-security-policy'] = headers['content-security-policy'].replace(` ${thanks.origin}`, '');
      await route.fulfill({ response: answer, headers });
    });
    response = await control.page.goto(controlLink);
    const controlCsp = response.headers()['content-security-policy'] || '';
    check(!controlCsp.includes(thanks.origin), 'confirmed_url control: the confirm page served with form-action \'self\' only', controlCsp);
    const before = thanks.requests.length;
    const refused = control.page
      .waitForEvent('console', { predicate: (message) => /form-action/.test(message.text()), timeout: 10_000 })
      .catch(() => null);
    await control.page.getByRole('button', { name: 'Confirm signup', exact: true }).click({ noWaitAfter: true });
    const message = await refused;
    check(
      message !== null && thanks.requests.length === before,
      `confirmed_url control: without the origin Chromium refuses the redirect (${JSON.stringify(message?.text().slice(0, 120))}) and the thank-you server gets nothing`,
      `console: ${JSON.stringify(control.consoleErrors)}, thank-you requests: ${JSON.stringify(thanks.requests.slice(before))}, at ${control.page.url()}`,
    );
    await control.context.close();
  } finally {
    await thanks.stop();
  }
  await server.stop();
}
