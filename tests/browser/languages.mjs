// Languages in Chromium: every page of the signup flow of a list in the pseudo-locale en-XA
// (every message accented and 40 % longer: a layout that breaks under it breaks under German or
// Finnish too) and, when locales/ar.ftl is there, of a list in Arabic (right to left). Each page
// in light and dark colour scheme at 375 and 1280 px: <html lang> and dir ("rtl" for Arabic,
// with the page's direction and the error's border on the right), no horizontal scroll, no text
// sticking out of the page or clipped by its box, in en-XA no plain English left in what the
// page shows, axe-core without a violation, and a screenshot to
// target/browser-screenshots/lang-<code>-<page>-<theme>-<width>.png.
// e2e.mjs runs it after the form fields; `node tests/browser/languages.mjs` runs it alone.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { THEMES, VIEWPORTS } from './a11y.mjs';
import { axeInTheme } from './lib/axe.mjs';
import { check, ok } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { navigateBy } from './lib/page.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { postForm, startServer } from './lib/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The pseudo-locale's list: its own words (name, consent text, field label) are not ASCII
// either, so any ASCII word on its pages is the program's.
const PSEUDO = {
  id: 'xa',
  name: 'Ñéŵš',
  language: 'en-XA',
  consent_text: 'Ŷéš, ƥļéášé šéñð ɱé Ñéŵš',
  site_name: 'Ƀáķéŕý',
  site_url: 'https://bakery.example/',
  fields: [{ name: 'first_name', label: 'Ƒîŕšţ ñáɱé' }],
};

// Arabic, with a Latin list name inside right-to-left text.
const ARABIC = {
  id: 'ar',
  name: 'Bakery News',
  language: 'ar',
  consent_text: 'أوافق على تلقي نشرة المخبز بالبريد الإلكتروني.',
  site_name: 'مخبز الحي',
  site_url: 'https://bakery.example/',
};

export function languageLists() {
  return fs.existsSync(path.join(ROOT, 'locales', 'ar.ftl')) ? [PSEUDO, ARABIC] : [PSEUDO];
}

// The links of one list's flow: a pending signup's confirm page, a confirmed one's (already
// confirmed) and its welcome mail's preference page, an unknown token.
async function links(server, list, seen) {
  const signUp = async (email) => {
    const answer = await postForm(`${server.base}/api/signup`, { email, consent: 'yes', list: list.id });
    check(answer.status === 303, `${list.language}: POST /api/signup answers 303`, `status ${answer.status}`);
    return (await waitForMailLink(server.mailDir, server.base, '/confirm', seen, email)).link;
  };
  const confirm = await signUp(`lang-pending-${list.id}@example.com`);
  const confirmed = await signUp(`lang-confirmed-${list.id}@example.com`);
  const token = new URL(confirmed).searchParams.get('token');
  const answer = await postForm(`${server.base}/api/confirm`, { token });
  check(answer.status === 303, `${list.language}: POST /api/confirm answers 303`, `status ${answer.status}`);
  const manage = (await waitForMailLink(server.mailDir, server.base, '/manage', seen, `lang-confirmed-${list.id}@example.com`)).link;
  return { confirm, confirmed, manage, unknown: `${server.base}/confirm?token=${'A'.repeat(token.length)}` };
}

function specs(server, list, l) {
  const L = server.base;
  const id = list.id;
  return [
    { name: 'signup', url: `${L}/signup?list=${id}`, status: 200 },
    {
      name: 'signup-error',
      url: `${L}/signup?list=${id}`,
      status: 400,
      error: true,
      submit: async (page) => {
        await page.locator('input[type=email]').fill('not-an-address');
        await page.locator('#consent').check();
        await page.locator('button[type=submit]').click();
      },
    },
    { name: 'check-inbox', url: `${L}/check-inbox?list=${id}`, status: 200 },
    { name: 'check-inbox-link', url: `${L}/check-inbox?list=${id}&inbox=gmail`, status: 200 },
    { name: 'confirm', url: l.confirm, status: 200 },
    { name: 'confirmed', url: `${L}/confirmed?list=${id}`, status: 200 },
    { name: 'already-confirmed', url: l.confirmed, status: 200 },
    { name: 'preferences', url: l.manage, status: 200 },
    { name: 'saved', url: `${L}/saved?list=${id}`, status: 200 },
    { name: 'removed', url: `${L}/removed?list=${id}`, status: 200 },
    { name: 'privacy', url: `${L}/privacy?list=${id}`, status: 200 },
    // Links that name no list: in the browser's language among the lists' (each list's pages
    // are visited by a browser of that list's locale).
    { name: 'expired', url: l.unknown, status: 410 },
    { name: 'malformed', url: `${L}/confirm?token=cut-off`, status: 400 },
  ];
}

// What the page's layout does with its text: every element showing text stays inside the
// viewport and inside its own box (nothing clipped by overflow), the honeypot excepted.
async function layoutProblems(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const problems = [];
    const name = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''}`;
    for (const el of document.querySelectorAll('body *')) {
      if (el.closest('.hp')) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      const text = [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
      if (!text) continue;
      const rect = el.getBoundingClientRect();
      if (rect.left < -1 || rect.right > width + 1) {
        problems.push(`${name(el)} sticks out of the page (${Math.round(rect.left)} to ${Math.round(rect.right)} of ${width} px)`);
      }
      if (style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) problems.push(`${name(el)} clips its text sideways`);
      if (style.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1) problems.push(`${name(el)} clips its text below`);
    }
    return problems;
  });
}

async function checkOne(page, list, spec, theme, viewport, shotDir, problems) {
  const where = `${list.language} ${spec.name} ${theme} ${viewport.width}px`;
  let response = await page.goto(spec.url);
  if (spec.submit) response = await navigateBy(page, () => spec.submit(page));
  check(response !== null && response.status() === spec.status, `${where}: status ${spec.status}`, `got ${response?.status()}`);
  const rtl = list.language === 'ar';
  const seen = await page.evaluate(() => ({
    lang: document.documentElement.getAttribute('lang'),
    dir: document.documentElement.getAttribute('dir'),
    direction: getComputedStyle(document.body).direction,
    h1: [...document.querySelectorAll('h1')].map((h1) => h1.innerText.trim()),
    text: document.body.innerText,
    errorBorder: (() => {
      const error = document.querySelector('.error');
      if (!error) return null;
      const style = getComputedStyle(error);
      return { right: parseFloat(style.borderRightWidth), left: parseFloat(style.borderLeftWidth) };
    })(),
  }));
  check(seen.lang === list.language, `${where}: <html lang="${list.language}">`, JSON.stringify(seen.lang));
  check(seen.dir === (rtl ? 'rtl' : 'ltr') && seen.direction === (rtl ? 'rtl' : 'ltr'), `${where}: dir and direction ${rtl ? 'rtl' : 'ltr'}`, `${seen.dir} ${seen.direction}`);
  check(seen.h1.length === 1 && seen.h1[0].length > 0, `${where}: one heading`, JSON.stringify(seen.h1));
  if (spec.error) {
    const border = seen.errorBorder;
    const mirrored = border && (rtl ? border.right > 0 && border.left === 0 : border.left > 0 && border.right === 0);
    check(mirrored, `${where}: the error's border is on the ${rtl ? 'right' : 'left'}, where the text starts`, JSON.stringify(border));
  }
  if (list.language === 'en-XA') {
    const words = seen.text
      .split(/\s+/)
      .filter((word) => !word.includes('@') && !word.includes('://') && !word.includes('signupd'))
      .flatMap((word) => word.match(/[A-Za-z]{2,}/g) || [])
      // The provider's name, and the Arabic list's Latin name (one sender: the preference page
      // shows both lists).
      .filter((word) => word !== 'Gmail' && !ARABIC.name.split(' ').includes(word));
    check(words.length === 0, `${where}: no plain English`, JSON.stringify(words));
  }
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
  const layout = await layoutProblems(page);
  check(layout.length === 0, `${where}: no text outside the page or clipped`, layout.join('; '));
  const { lines } = await axeInTheme(page, theme, where);
  problems.push(...lines);
  await page.screenshot({ path: path.join(shotDir, `lang-${list.language}-${spec.name}-${theme}-${viewport.width}.png`), fullPage: true });
}

export async function languagesFlow(browser, binary, tmp, shotDir) {
  const lists = languageLists();
  if (lists.length === 1) console.log('     (no locales/ar.ftl: the right-to-left pages are not checked)');
  const server = await startServer(binary, path.join(tmp, 'languages'), 'languages server', lists, {
    signup: ['rate_limits = [ { window = "10m", max = 1000 } ]'],
  });
  fs.mkdirSync(shotDir, { recursive: true });
  const seen = new Set();
  const problems = [];
  for (const list of lists) {
    const pages = specs(server, list, await links(server, list, seen));
    for (const theme of THEMES) {
      for (const viewport of VIEWPORTS) {
        const context = await browser.newContext({ viewport, colorScheme: theme, javaScriptEnabled: true, locale: list.language });
        const page = await context.newPage();
        for (const spec of pages) await checkOne(page, list, spec, theme, viewport, shotDir, problems);
        await context.close();
      }
    }
  }
  check(problems.length === 0, 'languages: axe found no violation', `${problems.length} violation(s):\n  ${problems.join('\n  ')}`);
  ok(`languages: screenshots in ${shotDir}`);
  await server.stop();
}

// Alone: `node tests/browser/languages.mjs` (after `cargo test --no-run`).
if (isMain(import.meta.url)) await runAlone('languages', languagesFlow);
