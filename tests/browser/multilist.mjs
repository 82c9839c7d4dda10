// Several lists in one form (docs/http-api.md), in Chromium with JavaScript off: the hosted
// form with a checkbox per list (GET /signup?list=…&list=…), ticked with the keyboard; the one
// confirmation mail for the two lists of one sender; its confirm page naming both; one button
// press confirming both (the confirm link then says "already confirmed" for both, and a
// welcome mail comes for each); no mail for the list not ticked; and the form sent with no
// list ticked, which comes back with the same choice and an alert.

import fs from 'node:fs';
import path from 'node:path';

import { check, ok } from './lib/checks.mjs';
import { readMail, waitForMailLink } from './lib/mail.mjs';
import { checkPage, focusedId, jsOffPage, keyWalk, navigateBy, startFromTop } from './lib/page.mjs';

// Two lists of one sender (one mail confirms both) and one of another.
export const MULTI_LISTS = [
  {
    id: 'alpha',
    name: 'Alpha News',
    from: 'Shop <news@shop.example>',
    consent_text: 'Email me the shop news about once a month. I can unsubscribe at any time.',
  },
  {
    id: 'club',
    name: 'Club Letter',
    from: 'Club <letter@club.example>',
    // A long word (a URL) in a label must wrap at phone width, not widen the page.
    consent_text: 'Email me the club letter every Friday. How to unsubscribe: https://club.example/letter/unsubscribe-and-privacy',
  },
  {
    id: 'beta',
    name: 'Beta Offers',
    from: 'Shop <news@shop.example>',
    consent_text: 'Email me the weekly offers. I can unsubscribe at any time.',
  },
];

const byId = Object.fromEntries(MULTI_LISTS.map((list) => [list.id, list]));
// The form offers the lists in this order, the other sender's list between the two ticked.
export const MULTI_FORM_PATH = `/signup?${MULTI_LISTS.map((list) => `list=${list.id}`).join('&')}`;

// The checkboxes of the list choice, in page order: [{ id, value, checked, label }].
async function choices(page) {
  return page.locator('fieldset.lists input[type=checkbox]').evaluateAll((boxes) =>
    boxes.map((box) => ({
      id: box.id,
      value: box.value,
      checked: box.checked,
      label: (box.labels[0]?.textContent || '').replace(/\s+/g, ' ').trim(),
    })),
  );
}

// The form offers every list of MULTI_FORM_PATH, in order, each labelled with its name and
// consent text, ticked as `ticked` says.
async function checkChoice(page, where, ticked) {
  const seen = await choices(page);
  const want = MULTI_LISTS.map((list) => ({
    id: `list-${list.id}`,
    value: list.id,
    checked: ticked.includes(list.id),
    label: `${list.name} ${list.consent_text}`,
  }));
  const ids = MULTI_LISTS.map((list) => list.id).join(', ');
  check(
    JSON.stringify(seen) === JSON.stringify(want),
    `${where}: a checkbox per list (${ids}) labelled with name and consent text, ticked: ${ticked.join(', ') || 'none'}`,
    `got ${JSON.stringify(seen)}`,
  );
  const legend = await page.locator('fieldset.lists legend').innerText();
  const group = page.getByRole('group', { name: legend.trim(), exact: true });
  check(
    (await group.count()) === 1 && (await group.getByRole('checkbox').count()) === MULTI_LISTS.length,
    `${where}: the checkboxes are a group named by its legend "${legend.trim()}"`,
  );
}

// The .eml files addressed to `to`: [{ name, headers, text }].
function mailsTo(mailDir, to) {
  return fs
    .readdirSync(mailDir)
    .filter((name) => name.endsWith('.eml'))
    .map((name) => ({ name, ...readMail(path.join(mailDir, name)) }))
    .filter((mail) => (mail.headers.to || '').includes(to));
}

export async function multiListFlow(browser, server) {
  const { base, mailDir } = server;
  const { context, page, consoleErrors } = await jsOffPage(browser, 'multi-list');

  // ---- the form: a checkbox per list
  let response = await page.goto(`${base}${MULTI_FORM_PATH}`);
  await checkPage(page, response, 'multi-list form', {
    status: 200,
    pathname: '/signup',
    search: MULTI_FORM_PATH.slice('/signup'.length),
    heading: 'Sign up',
  });
  await checkChoice(page, 'multi-list form', []);
  const email = page.getByLabel('Email address', { exact: true });
  const consent = page.locator('#consent');
  check(
    (await page.getByRole('checkbox').count()) === MULTI_LISTS.length + 1 && (await consent.isVisible()),
    'multi-list form: after the lists, one consent checkbox',
  );

  // Tick Alpha News and Beta Offers with the keyboard only, passing Club Letter by.
  const address = 'multi-reader@example.com';
  await startFromTop(page);
  const { press, trail } = keyWalk(page);
  await press('Tab');
  check((await focusedId(page)) === 'list-alpha', 'multi-list form: the first Tab focuses the "Alpha News" checkbox', trail());
  await press('Space');
  await press('Tab');
  check((await focusedId(page)) === 'list-club', 'multi-list form: the next Tab focuses "Club Letter", left unticked', trail());
  await press('Tab');
  check((await focusedId(page)) === 'list-beta', 'multi-list form: the next Tab focuses "Beta Offers"', trail());
  await press('Space');
  await press('Tab');
  check((await focusedId(page)) === 'email', 'multi-list form: then the email field', trail());
  await page.keyboard.type(address);
  await press('Tab');
  check((await focusedId(page)) === 'consent', 'multi-list form: then the consent checkbox', trail());
  await press('Space');
  await press('Tab');
  const button = page.getByRole('button', { name: 'Sign up', exact: true });
  check(await button.evaluate((el) => el === document.activeElement), 'multi-list form: then the "Sign up" button', trail());
  check(await consent.isChecked(), 'multi-list form: Space ticked the consent checkbox');
  await checkChoice(page, 'multi-list form after Space on two lists', ['alpha', 'beta']);

  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, 'multi-list signup (Enter)', {
    status: 200,
    pathname: '/check-inbox',
    search: '?list=alpha',
    heading: 'Check your inbox',
  });

  // ---- one mail for the two lists of the shop
  const seen = new Set();
  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, address);
  ok(`multi-list: confirmation mail ${mail.file} has the confirm link`);
  check(mail.htmlHasLink, 'multi-list: the HTML part has the same confirm link');
  const mailText = mail.text.replace(/\s+/g, ' ');
  check(
    mailText.includes(`${byId.alpha.name} and ${byId.beta.name}`) && !mailText.includes(byId.club.name),
    `multi-list: the mail names "${byId.alpha.name} and ${byId.beta.name}", not ${byId.club.name}`,
    mail.text,
  );
  check(/Shop <news@shop\.example>/.test(mail.headers.from || ''), `multi-list: the mail is from the shop (${mail.headers.from})`);

  const tokenSearch = new URL(mail.link).search;
  response = await page.goto(mail.link);
  await checkPage(page, response, 'multi-list GET /confirm', {
    status: 200,
    pathname: '/confirm',
    search: tokenSearch,
    heading: 'Confirm your signup',
  });
  const intro = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  check(
    intro.includes(`${byId.alpha.name} and ${byId.beta.name}`),
    `multi-list GET /confirm: the page names "${byId.alpha.name} and ${byId.beta.name}"`,
    intro,
  );
  const confirmButton = page.getByRole('button', { name: 'Confirm signup', exact: true });
  check(
    (await page.getByRole('button').count()) === 1 && (await confirmButton.isVisible()),
    'multi-list GET /confirm: one "Confirm signup" button',
  );
  response = await navigateBy(page, () => confirmButton.click());
  await checkPage(page, response, 'multi-list confirm (click)', {
    status: 200,
    pathname: '/confirmed',
    search: '?list=alpha',
    heading: 'You are signed up',
  });

  // Both are confirmed: a welcome mail for each, and the link now says so for both.
  const welcomes = [];
  for (let i = 0; i < 2; i += 1) welcomes.push(await waitForMailLink(mailDir, base, '/manage', seen, address));
  const welcomed = ['alpha', 'beta'].filter((id) =>
    welcomes.some((welcome) => welcome.text.replace(/\s+/g, ' ').includes(`signed up for ${byId[id].name}.`)),
  );
  check(
    welcomed.length === 2,
    `multi-list: a welcome mail for each list (${welcomes.map((welcome) => welcome.file).join(', ')})`,
    `welcomed: ${welcomed.join(', ')}`,
  );
  response = await page.goto(mail.link);
  await checkPage(page, response, 'multi-list confirm link again', {
    status: 200,
    pathname: '/confirm',
    search: tokenSearch,
    heading: 'Already confirmed',
  });
  const already = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  check(
    already.includes(`already signed up for ${byId.alpha.name} and ${byId.beta.name}`),
    'multi-list confirm link again: both lists are confirmed',
    already,
  );
  // By now the intake's mails are out: still the one confirmation mail, none naming the list
  // of the other sender, which was not ticked.
  const confirmMails = mailsTo(mailDir, address).filter((m) => m.text.includes(`${base}/confirm?token=`));
  const club = mailsTo(mailDir, address).filter((m) => m.text.replace(/\s+/g, ' ').includes(byId.club.name));
  check(
    confirmMails.length === 1 && club.length === 0,
    `multi-list: one confirmation mail in all, none for ${byId.club.name}`,
    `confirmation mails: ${confirmMails.map((m) => m.name).join(', ')}; naming ${byId.club.name}: ${club.map((m) => m.name).join(', ')}`,
  );

  // ---- no list ticked: the same choice again, with an alert
  const other = 'multi-none@example.com';
  await page.goto(`${base}${MULTI_FORM_PATH}`);
  await email.fill(other);
  await consent.check();
  response = await navigateBy(page, () => button.click());
  const again = { status: 400, pathname: '/api/signup', search: '', heading: 'Sign up' };
  await checkPage(page, response, 'multi-list, no list ticked', again);
  const alert = page.getByRole('alert');
  const alertText = (await alert.count()) === 1 ? (await alert.innerText()).trim() : '';
  check(
    alertText === 'Please tick at least one list.' && (await alert.isVisible()),
    `multi-list, no list ticked: role=alert says ${JSON.stringify(alertText)}`,
  );
  await checkChoice(page, 'multi-list, no list ticked', []);
  check(
    (await email.inputValue()) === other,
    `multi-list, no list ticked: the field still holds "${other}"`,
    `it holds ${JSON.stringify(await email.inputValue())}`,
  );

  // From that page, a list ticked and a bad address: the tick is kept.
  await page.locator('#list-beta').check();
  await email.fill('not-an-address');
  await consent.check();
  response = await navigateBy(page, () => button.click());
  await checkPage(page, response, 'multi-list, bad address', again);
  check(await alert.isVisible(), `multi-list, bad address: shows ${JSON.stringify((await alert.innerText()).trim())}`);
  await checkChoice(page, 'multi-list, bad address', ['beta']);

  check(consoleErrors.length === 0, 'multi-list: no console errors (CSP violations) or failed loads', consoleErrors.join(' | '));
  await context.close();
}
