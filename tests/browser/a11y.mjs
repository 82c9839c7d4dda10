// The accessibility matrix: every page of the signup flow, in light and dark colour scheme, at
// phone (375 px) and desktop (1280 px) width, checked with axe-core (any violation of any impact
// fails the run) and screenshotted to target/browser-screenshots/<page>-<theme>-<width>.png
// (with -<list> or -<language> after it for the branded lists). The form for several lists
// (signup-lists*, confirm-lists) comes from a server with the MULTI_LISTS of multilist.mjs.
// The manage link opens the preference page (preferences*): every list of A11Y_LISTS (they
// share one sender), the address confirmed on one and pending on another; saved* is where
// saving it ends. check-inbox-link* is the check-inbox page with the "open your inbox" link of a
// Gmail address (the link named in the list's language, to Gmail, reached with Tab).
// The four theme × width combinations run side by side, each in its own browser context.

import fs from 'node:fs';
import path from 'node:path';

import { axeInTheme } from './lib/axe.mjs';
import { check, ok } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { focused, navigateBy, startFromTop } from './lib/page.mjs';
import { postForm } from './lib/server.mjs';
import { MULTI_FORM_PATH, MULTI_LISTS } from './multilist.mjs';

export const THEMES = ['light', 'dark'];
export const VIEWPORTS = [
  { width: 375, height: 667 },
  { width: 1280, height: 800 },
];

// Lists with their own brand: an accent colour too light for links on white (the button
// keeps it, with dark text), one too dark for links on the dark background, and a German list.
// `suffix` names their screenshots.
const BRANDED = [
  {
    suffix: 'sun',
    list: { id: 'sun', name: 'Sunshine Letter', site_name: 'Sun Press', site_url: 'https://sun.example/', accent_color: '#ffd400' },
  },
  {
    suffix: 'navy',
    list: { id: 'navy', name: 'Harbour Notes', site_name: 'Harbour', site_url: 'https://harbour.example/', accent_color: '#0b1f5c' },
  },
  {
    suffix: 'de',
    list: { id: 'neu', name: 'Neuigkeiten', site_name: 'Beispiel GmbH', site_url: 'https://beispiel.example/', language: 'de' },
  },
];

// The lists of the server the matrix runs against: several lists (so / is the chooser), one of
// them asking for the address again on the confirm page, and the branded ones.
export const A11Y_LISTS = [
  { id: 'news', name: 'News' },
  { id: 'club', name: 'Reading Club', confirm_mode: 'retype' },
  ...BRANDED.map((branded) => branded.list),
];

// What the pages say, per language, for the checks of the branded pages.
const WORDS = {
  en: {
    backTo: (site) => `Back to ${site}`,
    emailLabel: 'Email address',
    signup: (list) => `Sign up for ${list}`,
    checkInbox: 'Check your inbox',
    openGmail: 'Open Gmail',
    confirm: 'Confirm your signup',
    confirmed: 'You are signed up',
    preferences: 'Your email preferences',
    saved: 'Preferences saved',
    removed: 'Address removed',
    privacy: 'What happens to your address',
  },
  de: {
    backTo: (site) => `Zurück zu ${site}`,
    emailLabel: 'E-Mail-Adresse',
    signup: (list) => `Anmeldung für ${list}`,
    checkInbox: 'Sehen Sie in Ihr Postfach',
    openGmail: 'Gmail öffnen',
    confirm: 'Anmeldung bestätigen',
    confirmed: 'Sie sind angemeldet',
    preferences: 'Ihre E-Mail-Einstellungen',
    saved: 'Einstellungen gespeichert',
    removed: 'Adresse entfernt',
    privacy: 'Was mit Ihrer Adresse geschieht',
  },
};

async function signUp(server, list, email, seen) {
  const answer = await postForm(`${server.base}/api/signup`, { email, consent: 'yes', list });
  check(
    answer.status === 303,
    `${server.name}: POST /api/signup for ${list} answers 303`,
    `status ${answer.status}`,
  );
  return (await waitForMailLink(server.mailDir, server.base, '/confirm', seen, email)).link;
}

// A pending signup of `list` (its confirm page) and a confirmed one (its confirm link now says
// "already confirmed"; its welcome mail has the manage link, which opens the preference page).
// The confirmed address also signs up, and stays pending, for `pendingList` (every list of
// A11Y_LISTS has the same sender), so that its preference page shows one list ticked and one
// pending.
async function listLinks(server, list, seen, pendingList) {
  const confirm = await signUp(server, list, `a11y-pending-${list}@example.com`, seen);
  const confirmed = await signUp(server, list, `a11y-confirmed-${list}@example.com`, seen);
  await signUp(server, pendingList, `a11y-confirmed-${list}@example.com`, seen);
  const token = new URL(confirmed).searchParams.get('token');
  const answer = await postForm(`${server.base}/api/confirm`, { token });
  check(
    answer.status === 303 && answer.headers.get('location') === `/confirmed?list=${list}`,
    `${server.name}: POST /api/confirm answers 303 to /confirmed?list=${list}`,
    `status ${answer.status}, location ${answer.headers.get('location')}`,
  );
  const manage = (await waitForMailLink(server.mailDir, server.base, '/manage', seen, `a11y-confirmed-${list}@example.com`)).link;
  // A well-formed token that matches nothing: the same length and alphabet as a real one.
  const unknown = `${server.base}/confirm?token=${'A'.repeat(token.length)}`;
  return { confirm, confirmed, manage, unknown };
}

// Fills `field` (by its label), ticks the consent box if there is one, and submits the form.
const fillAndSend = (field, value) => async (page) => {
  await page.getByLabel(field, { exact: true }).fill(value);
  const consent = page.getByRole('checkbox');
  if (await consent.count()) await consent.check();
  await page.locator('button[type=submit]').click();
};

// The preference page shows every list of A11Y_LISTS (one sender), `ticked` ticked and the only
// one ticked, `pending` marked pending and the only one marked.
const tickedAndPending = (ticked, pending) => async (page, where) => {
  const boxes = await page.locator('input[type=checkbox][name=list]').evaluateAll((inputs) =>
    inputs.map((box) => ({ value: box.value, checked: box.checked, pending: Boolean(box.labels[0]?.querySelector('.pending')) })),
  );
  check(
    JSON.stringify(boxes.map((box) => box.value)) === JSON.stringify(A11Y_LISTS.map((list) => list.id)) &&
      JSON.stringify(boxes.filter((box) => box.checked).map((box) => box.value)) === JSON.stringify([ticked]) &&
      JSON.stringify(boxes.filter((box) => box.pending).map((box) => box.value)) === JSON.stringify([pending]),
    `${where}: every list, ${ticked} ticked, ${pending} pending`,
    JSON.stringify(boxes),
  );
};

// The "open your inbox" link: one link named `label`, to Gmail's search, reached with Tab.
function opensGmail(label) {
  return async (page, where) => {
    const link = page.getByRole('link', { name: label, exact: true });
    check((await link.count()) === 1, `${where}: one link "${label}"`);
    const href = await link.getAttribute('href');
    check(href.startsWith('https://mail.google.com/mail/u/0/#search/from%3A('), `${where}: it opens Gmail's search for the sender`, href);
    await startFromTop(page);
    let reached = false;
    for (let n = 0; n < 12 && !reached; n += 1) {
      await page.keyboard.press('Tab');
      reached = (await focused(page))?.href === href;
    }
    check(reached, `${where}: the link is reached with Tab`);
    await startFromTop(page);
  };
}

async function showsAlert(page, where) {
  check(await page.getByRole('alert').isVisible(), `${where}: shows the error`);
}

// The brand around a page of `list`: <html lang>, the site's name in the title, the "back to"
// link to its site_url, and the accent colour on the button exactly as configured.
function brandCheck(list) {
  const lang = list.language || 'en';
  const backTo = WORDS[lang].backTo(list.site_name);
  return async (page, where) => {
    const seen = await page.evaluate((siteUrl) => ({
      lang: document.documentElement.getAttribute('lang'),
      title: document.title,
      back: [...document.querySelectorAll('a')].filter((a) => a.getAttribute('href') === siteUrl).map((a) => a.textContent.trim()),
      button: document.querySelector('button') && getComputedStyle(document.querySelector('button')).backgroundColor,
    }), list.site_url);
    check(seen.lang === lang, `${where}: <html lang="${lang}">`, `lang is ${JSON.stringify(seen.lang)}`);
    check(seen.title.includes(list.site_name), `${where}: the title names ${list.site_name}`, `title ${JSON.stringify(seen.title)}`);
    check(
      seen.back.some((text) => text.includes(backTo)),
      `${where}: "${backTo}" links to ${list.site_url}`,
      `links to it: ${JSON.stringify(seen.back)}`,
    );
    if (list.accent_color && seen.button) {
      const [r, g, b] = list.accent_color.slice(1).match(/../g).map((hex) => parseInt(hex, 16));
      check(seen.button === `rgb(${r}, ${g}, ${b})`, `${where}: the button is ${list.accent_color}`, seen.button);
    }
  };
}

// The pages of one branded list.
function brandedSpecs(L, { suffix, list }, links) {
  const w = WORDS[list.language || 'en'];
  const brand = brandCheck(list);
  const spec = (name, url, status, heading, extra = {}) => ({ name, suffix, url, status, heading, checks: [brand], ...extra });
  return [
    spec('signup-list', `${L}/signup?list=${list.id}`, 200, w.signup(list.name)),
    spec('signup-error', `${L}/signup?list=${list.id}`, 400, w.signup(list.name), {
      submit: fillAndSend(w.emailLabel, 'not-an-address'),
      checks: [brand, showsAlert],
    }),
    spec('check-inbox', `${L}/check-inbox?list=${list.id}`, 200, w.checkInbox),
    spec('check-inbox-link', `${L}/check-inbox?list=${list.id}&inbox=gmail`, 200, w.checkInbox, {
      checks: [brand, opensGmail(w.openGmail)],
    }),
    spec('confirm', links.confirm, 200, w.confirm),
    spec('confirmed', `${L}/confirmed?list=${list.id}`, 200, w.confirmed),
    spec('preferences', links.manage, 200, w.preferences, { checks: [brand, tickedAndPending(list.id, 'news')] }),
    spec('saved', `${L}/saved?list=${list.id}`, 200, w.saved),
    spec('removed', `${L}/removed?list=${list.id}`, 200, w.removed),
    spec('privacy', `${L}/privacy?list=${list.id}`, 200, w.privacy),
  ];
}

// The pages of several lists in one form: the form with a checkbox per list, the same sent with
// none ticked, and the confirm page of the one mail for the two lists of one sender.
async function multiListSpecs(multi) {
  const [first, , second] = MULTI_LISTS;
  const email = 'a11y-multi@example.com';
  const answer = await postForm(`${multi.base}/api/signup`, [
    ['email', email],
    ['consent', 'yes'],
    ['list', first.id],
    ['list', second.id],
  ]);
  check(answer.status === 303, `${multi.name}: POST /api/signup for ${first.id} and ${second.id} answers 303`, `status ${answer.status}`);
  const confirm = (await waitForMailLink(multi.mailDir, multi.base, '/confirm', new Set(), email)).link;
  const names = `${first.name} and ${second.name}`;
  const namesBoth = async (page, where) => {
    const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
    check(text.includes(names), `${where}: names "${names}"`, text);
  };
  const form = `${multi.base}${MULTI_FORM_PATH}`;
  return [
    { name: 'signup-lists', url: form, status: 200, heading: 'Sign up' },
    {
      name: 'signup-lists-error',
      url: form,
      // Address and consent, but no list ticked.
      submit: async (page) => {
        await page.getByLabel('Email address', { exact: true }).fill(email);
        await page.locator('#consent').check();
        await page.locator('button[type=submit]').click();
      },
      status: 400,
      heading: 'Sign up',
      checks: [showsAlert],
    },
    { name: 'confirm-lists', url: confirm, status: 200, heading: 'Confirm your signup', checks: [namesBoth] },
  ];
}

// Every page of the flow: `flowBase` serves one list (the form at /), `server` the A11Y_LISTS,
// `multi` the MULTI_LISTS (the form with a checkbox per list).
// Each spec: { name, suffix?, url, status, heading, submit?(page), checks?: [(page, where)] }.
export async function pageSpecs(flowBase, server, multi) {
  const seen = new Set();
  const links = await listLinks(server, 'news', seen, 'club');
  const retype = await signUp(server, 'club', 'a11y-retype@example.com', seen);
  const L = server.base;
  const specs = [
    { name: 'signup', url: `${flowBase}/`, status: 200, heading: 'Sign up for News' },
    { name: 'lists', url: `${L}/`, status: 200, heading: 'Sign up' },
    { name: 'signup-list', url: `${L}/signup?list=news`, status: 200, heading: 'Sign up for News' },
    {
      name: 'signup-error',
      url: `${L}/signup?list=news`,
      submit: fillAndSend('Email address', 'not-an-address'),
      status: 400,
      heading: 'Sign up for News',
      checks: [showsAlert],
    },
    { name: 'check-inbox', url: `${L}/check-inbox?list=news`, status: 200, heading: 'Check your inbox' },
    {
      name: 'check-inbox-link',
      url: `${L}/check-inbox?list=news&inbox=gmail`,
      status: 200,
      heading: 'Check your inbox',
      checks: [opensGmail('Open Gmail')],
    },
    { name: 'confirm', url: links.confirm, status: 200, heading: 'Confirm your signup' },
    { name: 'confirm-retype', url: retype, status: 200, heading: 'Confirm your signup' },
    {
      name: 'confirm-retype-error',
      url: retype,
      submit: fillAndSend('Your email address', 'someone-else@example.com'),
      status: 400,
      heading: 'Confirm your signup',
      checks: [showsAlert],
    },
    { name: 'confirmed', url: `${L}/confirmed?list=news`, status: 200, heading: 'You are signed up' },
    { name: 'already-confirmed', url: links.confirmed, status: 200, heading: 'Already confirmed' },
    { name: 'expired', url: links.unknown, status: 410, heading: 'This link has expired' },
    { name: 'malformed', url: `${L}/confirm?token=cut-off`, status: 400, heading: 'This link is incomplete' },
    {
      name: 'preferences',
      url: links.manage,
      status: 200,
      heading: 'Your email preferences',
      checks: [tickedAndPending('news', 'club')],
    },
    { name: 'saved', url: `${L}/saved?list=news`, status: 200, heading: 'Preferences saved' },
    { name: 'removed', url: `${L}/removed?list=news`, status: 200, heading: 'Address removed' },
    { name: 'privacy', url: `${L}/privacy?list=news`, status: 200, heading: 'What happens to your address' },
    { name: 'not-found', url: `${L}/signup?list=nope`, status: 404, heading: 'Not found' },
  ];
  for (const branded of BRANDED) {
    specs.push(...brandedSpecs(L, branded, await listLinks(server, branded.list.id, seen, 'news')));
  }
  specs.push(...(await multiListSpecs(multi)));
  return specs;
}

// WCAG relative luminance and contrast ratio of two computed "rgb(…)"/"rgba(…)" colours.
function luminance(css) {
  const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map((part) => {
    const c = Number(part) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

// axe does not look at focus indicators: the first Tab stop must show a solid ring of at least
// 2 px that stands out from the page background by 3:1 (WCAG 1.4.11).
async function checkFocusRing(page, where) {
  await page.keyboard.press('Tab');
  const ring = await page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    return {
      what: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}`,
      style: style.outlineStyle,
      width: parseFloat(style.outlineWidth),
      color: style.outlineColor,
      background: getComputedStyle(document.documentElement).backgroundColor,
    };
  });
  if (!ring) return; // nothing to focus on this page
  check(!/^rgba\(.*,\s*0\)$/.test(ring.background), `${where}: the page has a background colour`, ring.background);
  const ratio = contrast(ring.color, ring.background);
  check(
    ring.style !== 'none' && ring.width >= 2 && ratio >= 3,
    `${where}: focus ring on ${ring.what} (${ring.style} ${ring.width}px, ${ratio.toFixed(1)}:1 against the page)`,
    JSON.stringify(ring),
  );
}

function label(spec, theme, viewport) {
  return `${spec.name}${spec.suffix ? `[${spec.suffix}]` : ''} ${theme} ${viewport.width}px`;
}

// Opens one page of the matrix and checks it; returns the axe violations as lines naming page,
// theme, width, rule and selector.
async function checkOne(page, spec, theme, viewport, shotDir, problems) {
  const where = label(spec, theme, viewport);
  let response = await page.goto(spec.url);
  if (spec.submit) response = await navigateBy(page, () => spec.submit(page));
  check(response !== null && response.status() === spec.status, `${where}: status ${spec.status}`, `got ${response?.status()} at ${page.url()}`);
  const h1 = (await page.locator('h1').allInnerTexts()).map((text) => text.trim());
  if (spec.heading) check(h1.length === 1 && h1[0] === spec.heading, `${where}: h1 "${spec.heading}"`, `h1 is ${JSON.stringify(h1)}`);
  for (const extra of spec.checks || []) await extra(page, where);
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);

  const { result, lines } = await axeInTheme(page, theme, where, `${where} ${page.url().replace(/token=[^&]+/, 'token=…')}`);
  problems.push(...lines);
  const shot = path.join(shotDir, `${spec.name}-${theme}-${viewport.width}${spec.suffix ? `-${spec.suffix}` : ''}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  await checkFocusRing(page, where);
  return result;
}

// Runs `specs` in every theme × width; fails with every violation listed.
export async function runMatrix(browser, specs, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  for (const name of fs.readdirSync(shotDir)) {
    if (name.endsWith('.png')) fs.rmSync(path.join(shotDir, name));
  }
  const problems = [];
  const pageErrors = [];
  let checked = 0;
  const combos = THEMES.flatMap((theme) => VIEWPORTS.map((viewport) => ({ theme, viewport })));
  const outcomes = await Promise.allSettled(
    combos.map(async ({ theme, viewport }) => {
      const context = await browser.newContext({ colorScheme: theme, viewport });
      try {
        const page = await context.newPage();
        page.on('console', (message) => {
          if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
            pageErrors.push(`${theme} ${viewport.width}px ${page.url()}: ${message.text()}`);
          }
        });
        page.on('pageerror', (error) => pageErrors.push(`${theme} ${viewport.width}px: ${error}`));
        for (const spec of specs) {
          await checkOne(page, spec, theme, viewport, shotDir, problems);
          checked += 1;
        }
      } finally {
        await context.close();
      }
    }),
  );
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  check(pageErrors.length === 0, 'a11y: no console errors (CSP violations) while axe ran', pageErrors.join(' | '));
  check(
    problems.length === 0,
    `a11y: axe found no violation in ${checked} checks (${specs.length} pages × ${THEMES.length} themes × ${VIEWPORTS.length} widths)`,
    `${problems.length} violation(s):\n  ${problems.join('\n  ')}`,
  );
  ok(`a11y: screenshots in ${shotDir}`);
  return checked;
}
