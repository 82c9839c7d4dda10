// One list, several languages, on a real multilingual static site (docs/configuration.md,
// "Languages"; docs/http-api.md, `lang`): Debian's Hugo builds a two-language site (English at
// /, German at /de/) whose home page includes the partial `signupd snippet --for hugo --lang
// CODE` printed for its language. A small HTTP server of this test serves the built site on
// another loopback port; signupd serves one list `news` in English (its `language`) and German.
// 1. Each language's page, in Chromium with JavaScript off, shows the printed form in that
//    language (its `lang` attribute and the email label) with the hidden `lang` field; the
//    address typed, consent ticked and "submit" pressed posts it across origins to signupd,
//    which answers with its check-inbox page in the page's language (`lang=CODE` carried).
// 2. Each confirmation mail, read from the file transport, arrives in its page's language: its
//    Subject (RFC 2047 decoded) is the language's and its Content-Language the code. Both
//    subjects are printed.
// e2e.mjs runs it after the form fields; `node tests/browser/hugo.mjs` runs it alone. Needs the
// `hugo` command (.ci/browser installs Debian's package).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { check, ok } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { checkLang, jsOffPage, navigateBy } from './lib/page.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { startServer } from './lib/server.mjs';

const LIST = { id: 'news', name: 'Bakery News', language: 'en', languages: ['de'] };

// What each language's page and mail say (locales/<code>: the email label, the check-inbox
// title, the confirmation's subject).
const LANGUAGES = [
  { code: 'en', path: '/', email: 'Email address', checkInbox: 'Check your inbox', subject: 'Please confirm your signup' },
  {
    code: 'de',
    path: '/de/',
    email: 'E-Mail-Adresse',
    checkInbox: 'Sehen Sie in Ihr Postfach',
    subject: 'Bitte bestätigen Sie Ihre Anmeldung',
  },
];

// An RFC 2047 header value decoded: encoded words (B or Q, UTF-8) joined as the RFC says.
export function decodeHeader(value) {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_, kind, text) =>
      kind.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (__, hex) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

// The built site, served from `dir` on 127.0.0.1, any free port.
async function startSiteServer(dir) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://site');
    const file = path.join(dir, decodeURIComponent(url.pathname), url.pathname.endsWith('/') ? 'index.html' : '');
    if (!file.startsWith(dir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    stop: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

// The Hugo site in `dir`: English and German, each home page including its language's partial.
function writeSite(dir, binary, configPath) {
  fs.mkdirSync(path.join(dir, 'layouts', 'partials'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'content'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'config.toml'),
    [
      'baseURL = "/"',
      'title = "Bakery"',
      'defaultContentLanguage = "en"',
      'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "404", "robotsTXT"]',
      '[languages.en]',
      'languageName = "English"',
      'weight = 1',
      '[languages.de]',
      'languageName = "Deutsch"',
      'weight = 2',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'content', '_index.md'), '---\ntitle: "Bakery News"\n---\n');
  fs.writeFileSync(path.join(dir, 'content', '_index.de.md'), '---\ntitle: "Bäckerei-Neuigkeiten"\n---\n');
  fs.writeFileSync(
    path.join(dir, 'layouts', 'index.html'),
    '<!doctype html>\n<html lang="{{ site.Language.Lang }}">\n<head><meta charset="utf-8"><title>{{ .Title }}</title></head>\n' +
      '<body><main><h1>{{ .Title }}</h1>\n{{ partial (printf "signup-%s.html" site.Language.Lang) (dict) }}\n</main></body>\n</html>\n',
  );
  for (const { code } of LANGUAGES) {
    const partial = execFileSync(
      binary,
      ['snippet', '--config', configPath, '--list', LIST.id, '--for', 'hugo', '--lang', code],
      { encoding: 'utf8', env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SIGNUPD_'))) },
    );
    check(partial.includes(`<input type="hidden" name="lang" value="${code}">`), `hugo: the ${code} partial carries lang=${code}`);
    fs.writeFileSync(path.join(dir, 'layouts', 'partials', `signup-${code}.html`), partial);
  }
}

export async function hugoFlow(browser, binary, tmp) {
  const version = execFileSync('hugo', ['version'], { encoding: 'utf8' }).trim();
  console.log(`     ${version}`);
  const server = await startServer(binary, path.join(tmp, 'hugo-signupd'), 'hugo', [LIST]);
  const siteDir = path.join(tmp, 'hugo-site');
  const publicDir = path.join(tmp, 'hugo-public');
  writeSite(siteDir, binary, path.join(tmp, 'hugo-signupd', 'signupd.toml'));
  execFileSync('hugo', ['--source', siteDir, '--destination', publicDir, '--quiet'], { encoding: 'utf8' });
  for (const { code, path: page } of LANGUAGES) {
    check(fs.existsSync(path.join(publicDir, page, 'index.html')), `hugo: built the ${code} page at ${page}`);
  }
  const site = await startSiteServer(publicDir);
  const seen = new Set();
  const subjects = [];
  try {
    for (const language of LANGUAGES) {
      const { code } = language;
      const address = `hugo-${code}@example.com`;
      const { context, page, consoleErrors } = await jsOffPage(browser, `hugo ${code}`);
      try {
        const response = await page.goto(`${site.origin}${language.path}`);
        check(response.status() === 200, `hugo ${code}: the site's page answers 200`, String(response.status()));
        check((await page.locator('html').getAttribute('lang')) === code, `hugo ${code}: the page is in ${code}`);
        check((await page.locator('form').getAttribute('lang')) === code, `hugo ${code}: the printed form is in ${code}`);
        check(
          (await page.locator('form input[name="lang"]').getAttribute('value')) === code,
          `hugo ${code}: the form posts lang=${code}`,
        );
        await page.getByLabel(language.email, { exact: true }).fill(address);
        await page.locator('form input[name="consent"]').check();
        await navigateBy(page, () => page.locator('form button[type="submit"]').click());
        const landed = new URL(page.url());
        check(
          landed.origin === server.base && landed.pathname === '/check-inbox' && landed.searchParams.get('lang') === code,
          `hugo ${code}: the post lands on signupd's check-inbox page with lang=${code}`,
          page.url(),
        );
        await checkLang(page, `hugo ${code}: check-inbox`);
        check((await page.locator('html').getAttribute('lang')) === code, `hugo ${code}: check-inbox speaks ${code}`);
        check((await page.locator('h1').innerText()).includes(language.checkInbox), `hugo ${code}: "${language.checkInbox}"`);
        check(consoleErrors.length === 0, `hugo ${code}: no console error`, consoleErrors.join(' | '));
      } finally {
        await context.close();
      }
      const mail = await waitForMailLink(server.mailDir, server.base, '/confirm', seen, address);
      const subject = decodeHeader(mail.headers.subject || '');
      subjects.push(`${code}: ${subject}`);
      check(subject === language.subject, `hugo ${code}: the confirmation's subject is "${language.subject}"`, subject);
      check(mail.headers['content-language'] === code, `hugo ${code}: the confirmation is in ${code}`, mail.headers['content-language']);
    }
    console.log(`     confirmation subjects: ${subjects.join(' | ')}`);
    ok('hugo: each language of the site gets its confirmation in that language');
  } finally {
    await site.stop();
    await server.stop();
  }
}

if (isMain(import.meta.url)) {
  await runAlone('hugo', (browser, binary, tmp) => hugoFlow(browser, binary, tmp));
}
