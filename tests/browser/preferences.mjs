// The preference page (GET /manage, SPEC §4.6) in Chromium with JavaScript off, against the
// server of multilist.mjs (Alpha News and Beta Offers of the shop, Club Letter of another
// sender): sign up for Alpha News and confirm it; the welcome mail's manage link shows the
// shop's two lists and never the club's, Alpha ticked; Beta ticked with the keyboard and saved
// (it is confirmed at once, its own welcome mail comes); the link again shows both ticked; Alpha
// unticked and saved. Alpha's row is then gone, so its link names nothing and shows the page
// from before the preference page (src/subscribers/preferences.rs); Beta's manage link shows Alpha unticked
// and Beta ticked, on every visit.

import { check, ok } from './lib/checks.mjs';
import { waitForMailLink } from './lib/mail.mjs';
import { checkPage, focusedId, jsOffPage, keyWalk, navigateBy, startFromTop } from './lib/page.mjs';
import { MULTI_LISTS } from './multilist.mjs';

const byId = Object.fromEntries(MULTI_LISTS.map((list) => [list.id, list]));
// The shop's lists in the configuration's order, and the other sender's.
const SHOP = MULTI_LISTS.filter((list) => list.from === byId.alpha.from).map((list) => list.id);
const OTHER = MULTI_LISTS.filter((list) => list.from !== byId.alpha.from);

// The list checkboxes of the preference page, in page order: [{ id, value, checked, label }].
async function choices(page) {
  return page.locator('input[type=checkbox][name=list]').evaluateAll((boxes) =>
    boxes.map((box) => ({
      id: box.id,
      value: box.value,
      checked: box.checked,
      label: (box.labels[0]?.textContent || '').replace(/\s+/g, ' ').trim(),
    })),
  );
}

// The page shows the shop's lists (each labelled with name and consent text), ticked as
// `ticked` says, and nothing of the other sender's list.
async function checkChoices(page, where, ticked) {
  const seen = await choices(page);
  const want = SHOP.map((id) => ({
    id: `list-${id}`,
    value: id,
    checked: ticked.includes(id),
    label: `${byId[id].name} ${byId[id].consent_text}`,
  }));
  check(
    JSON.stringify(seen) === JSON.stringify(want),
    `${where}: exactly the sender's lists (${SHOP.join(', ')}), ticked: ${ticked.join(', ') || 'none'}`,
    `got ${JSON.stringify(seen)}`,
  );
  const html = await page.content();
  for (const other of OTHER) {
    check(
      !html.includes(other.name) && !html.includes(`value="${other.id}"`) && !html.includes(other.consent_text),
      `${where}: nothing of the other sender's list ${other.id} ("${other.name}") in the page`,
    );
  }
  check((await page.getByRole('checkbox').count()) === SHOP.length, `${where}: no other checkbox`);
}

export async function preferencesFlow(browser, server) {
  const { base, mailDir } = server;
  const { context, page, consoleErrors } = await jsOffPage(browser, 'preferences');

  // ---- sign up for Alpha News alone, and confirm it
  const address = 'pref-reader@example.com';
  let response = await page.goto(`${base}/signup?list=alpha`);
  await checkPage(page, response, 'preferences: GET /signup?list=alpha', {
    status: 200,
    pathname: '/signup',
    search: '?list=alpha',
    heading: `Sign up for ${byId.alpha.name}`,
  });
  await page.getByLabel('Email address', { exact: true }).fill(address);
  await page.locator('#consent').check();
  response = await navigateBy(page, () => page.getByRole('button', { name: 'Sign up', exact: true }).click());
  await checkPage(page, response, 'preferences: signup', { status: 200, pathname: '/check-inbox', search: '?list=alpha' });
  const seen = new Set();
  const confirmMail = await waitForMailLink(mailDir, base, '/confirm', seen, address);
  response = await page.goto(confirmMail.link);
  await checkPage(page, response, 'preferences: GET /confirm', {
    status: 200,
    pathname: '/confirm',
    search: new URL(confirmMail.link).search,
    heading: 'Confirm your signup',
  });
  response = await navigateBy(page, () => page.getByRole('button', { name: 'Confirm signup', exact: true }).click());
  await checkPage(page, response, 'preferences: confirm', { status: 200, pathname: '/confirmed', search: '?list=alpha' });
  const alphaWelcome = await waitForMailLink(mailDir, base, '/manage', seen, address);
  check(
    alphaWelcome.text.replace(/\s+/g, ' ').includes(`signed up for ${byId.alpha.name}.`),
    `preferences: the welcome mail ${alphaWelcome.file} is for ${byId.alpha.name} and has the manage link`,
    alphaWelcome.text,
  );

  // ---- the preference page: the shop's two lists, Alpha ticked
  const alphaLink = alphaWelcome.link;
  const alphaSearch = new URL(alphaLink).search;
  const openPreferences = async (link, where) => {
    const answer = await page.goto(link);
    await checkPage(page, answer, where, {
      status: 200,
      pathname: '/manage',
      search: new URL(link).search,
      heading: 'Your email preferences',
    });
  };
  await openPreferences(alphaLink, 'preferences: GET /manage');
  await checkChoices(page, 'preferences: GET /manage', ['alpha']);
  const legend = (await page.locator('fieldset.lists legend').innerText()).trim();
  check(
    (await page.getByRole('group', { name: legend, exact: true }).getByRole('checkbox').count()) === SHOP.length,
    `preferences: the checkboxes are a group named by its legend "${legend}"`,
  );
  check(
    (await page.locator('.pending').count()) === 0,
    'preferences: no list is marked pending (Alpha is confirmed, Beta has no row)',
  );
  const save = page.getByRole('button', { name: 'Save', exact: true });
  check(
    (await save.isVisible()) && (await page.getByRole('button', { name: 'Remove me from all', exact: true }).isVisible()),
    'preferences: shows "Save" and "Remove me from all"',
  );

  // Tick Beta Offers with the keyboard, and save with it.
  await startFromTop(page);
  const { press, trail } = keyWalk(page);
  await press('Tab');
  check((await focusedId(page)) === 'list-alpha', 'preferences: the first Tab focuses the "Alpha News" checkbox', trail());
  await press('Tab');
  check((await focusedId(page)) === 'list-beta', 'preferences: the next Tab focuses "Beta Offers"', trail());
  await press('Space');
  await checkChoices(page, 'preferences: after Space on Beta Offers', ['alpha', 'beta']);
  await press('Tab');
  check(await save.evaluate((el) => el === document.activeElement), 'preferences: the next Tab focuses "Save"', trail());
  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, 'preferences: Save (Enter)', {
    status: 200,
    pathname: '/saved',
    search: '?list=alpha',
    heading: 'Preferences saved',
  });
  console.log(`     /saved says: ${JSON.stringify((await page.locator('main').innerText()).replace(/\s+/g, ' ').trim())}`);

  // Beta was confirmed at once: its own welcome mail, with its own manage link.
  const betaWelcome = await waitForMailLink(mailDir, base, '/manage', seen, address);
  check(
    betaWelcome.text.replace(/\s+/g, ' ').includes(`signed up for ${byId.beta.name}.`) && betaWelcome.link !== alphaLink,
    `preferences: a welcome mail ${betaWelcome.file} for ${byId.beta.name}, with its own manage link`,
    betaWelcome.text,
  );

  await openPreferences(alphaLink, 'preferences: GET /manage again');
  await checkChoices(page, 'preferences: GET /manage again', ['alpha', 'beta']);

  // ---- untick Alpha News, save
  await page.locator('#list-alpha').uncheck();
  await checkChoices(page, 'preferences: after unticking Alpha News', ['beta']);
  response = await navigateBy(page, () => save.click());
  await checkPage(page, response, 'preferences: Save (click)', {
    status: 200,
    pathname: '/saved',
    search: '?list=alpha',
    heading: 'Preferences saved',
  });

  // Beta's link shows Alpha unticked, Beta still ticked, visit after visit.
  for (const visit of ['', ' again']) {
    const where = `preferences: GET /manage (Beta's link)${visit}`;
    await openPreferences(betaWelcome.link, where);
    await checkChoices(page, where, ['beta']);
  }
  // Alpha's row is gone with its untick: its link names nothing, and shows the page from before
  // the preference page (one button, no list).
  response = await page.goto(alphaLink);
  await checkPage(page, response, "preferences: GET /manage (Alpha's link) after unticking Alpha", {
    status: 200,
    pathname: '/manage',
    search: alphaSearch,
    heading: 'Remove my address',
  });
  check(
    (await page.getByRole('checkbox').count()) === 0,
    "preferences: Alpha's link no longer shows a preference page (no checkbox)",
  );
  ok('preferences: flow done');

  check(consoleErrors.length === 0, 'preferences: no console errors (CSP violations) or failed loads', consoleErrors.join(' | '));
  await context.close();
}
