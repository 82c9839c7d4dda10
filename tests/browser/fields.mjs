// A list's form fields ([[lists.fields]], docs/configuration.md; docs/http-api.md "Fields") in
// Chromium, against a real signupd serving one list that declares a required text field
// first_name (max_length 20), an optional select topic (Rust, Go, Zig) and a hidden campaign
// (max_length 40).
// 1. JavaScript off: GET /signup?list=notes&campaign=spring shows the email field, "First name"
//    (required, maxlength 20) and "Topic (optional)" (a select, first option empty "Choose
//    one") each with its label, and the campaign as a hidden input holding "spring" from the
//    query string (empty without it), in no label and not in the accessibility tree. Sent with
//    First name empty: 400, the form again with the alert naming "First name", the field
//    aria-invalid="true" and aria-describedby the alert (the email field no longer is) and marked
//    for the eye (border and a 4px bar in the error colour, 3:1 or more against the page; the
//    others unmarked), and the address, the topic, the campaign and the ticked consent kept. Filled (with spaces around it) and sent: the
//    check-inbox page; the mail's confirm link, the button, the welcome mail's manage link: the
//    preference page shows First name "Ada" (trimmed), Topic "Go", Campaign "spring" read-only
//    (a list of terms, no control carrying them).
// 2. Keyboard only, JavaScript still off (focus is read with Playwright's evaluate, which goes
//    over the DevTools protocol and runs whatever the page's JavaScript setting): Tab goes email
//    → First name → Topic → consent → "Sign up", then only links, never the honeypot or the
//    hidden field; ArrowDown changes the focused select; Space on "Sign up" with First name
//    empty sends the form (400, the field marked), then Tab to First name, type, Tab past the kept
//    topic and the consent still ticked, and Enter on "Sign up" land on check-inbox; the stored values are
//    on that subscriber's preference page.
// 3. Refusals, with JavaScript on where the page is altered: the browser stops typing at
//    maxlength (20 characters); with the attribute removed, 21 characters are sent: 400, First
//    name marked, the 21 characters kept. The "Rust" option's value changed to "rust" (case
//    counts) and chosen: 400, Topic marked, First name not. A campaign of 41 characters from the
//    link: 400 naming "Campaign". Posted directly as JSON: 21 characters, a topic not among the
//    options and a missing first_name are 400 {"error":"invalid_field","field":…}, 20 characters
//    (also 20 non-ASCII ones: the limit counts characters) and every option are accepted. No
//    refused address is ever mailed.
// 4. axe-core on the form, the form showing the field error, the preference page of a
//    subscriber with values and the privacy page ("The form also asks for First name, Topic and
//    Campaign.") in light and dark colour scheme at 375 and 1280 px, no horizontal scroll; zero
//    violations of any impact.
// 5. Screenshots to target/browser-screenshots/fields-<page>-<theme>-<width>.png.
// e2e.mjs runs it after the admin page (the accessibility matrix empties the screenshot folder
// first); `node tests/browser/fields.mjs` runs it alone.

import fs from 'node:fs';
import path from 'node:path';

import { THEMES, VIEWPORTS, contrast } from './a11y.mjs';
import { describeViolations, runAxe } from './lib/axe.mjs';
import { CheckFailed, check, ok } from './lib/checks.mjs';
import { readMail, waitForMailLink } from './lib/mail.mjs';
import { checkPage, describe, focused, jsOffPage, navigateBy, startFromTop } from './lib/page.mjs';
import { isMain, runAlone } from './lib/alone.mjs';
import { startServer } from './lib/server.mjs';

const TOPICS = ['Rust', 'Go', 'Zig'];
export const FIELDS_LIST = {
  id: 'notes',
  name: 'Field Notes',
  fields: [
    { name: 'first_name', label: 'First name', required: true, max_length: 20 },
    { name: 'topic', label: 'Topic', kind: 'select', options: TOPICS },
    { name: 'campaign', label: 'Campaign', kind: 'hidden', max_length: 40 },
  ],
};
const LIST = FIELDS_LIST.id;
const MAX = 20;
const HIDDEN_MAX = 40;

// What the pages say (locales/en.ftl: signup-, preferences- and privacy- messages).
const WORDS = {
  heading: `Sign up for ${FIELDS_LIST.name}`,
  missing: (label) => `Please fill in “${label}”.`,
  invalid: (label) => `Please check “${label}”: choose one of its options, or keep it shorter and on one line.`,
  chooseOne: 'Choose one',
  checkInbox: 'Check your inbox',
  confirm: 'Confirm your signup',
  confirmButton: 'Confirm signup',
  confirmed: 'You are signed up',
  preferences: 'Your email preferences',
  kept: 'What you told us when you signed up:',
  privacy: 'What happens to your address',
  privacyFields: 'The form also asks for First name, Topic and Campaign.',
};

const formPath = (query = '') => `/signup?list=${LIST}${query}`;

// POST /api/signup as a JSON client; returns { status, body }.
async function postJson(base, fields) {
  const answer = await fetch(`${base}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(fields),
    redirect: 'manual',
  });
  const text = await answer.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: answer.status, body };
}

// What the form holds and marks: per control its value, aria-invalid and the text of what its
// aria-describedby names; the hidden campaign; the alert.
async function formState(page) {
  return page.evaluate(() => {
    const described = (el) =>
      (el.getAttribute('aria-describedby') || '')
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => document.getElementById(id)?.textContent.trim() ?? `(no element #${id})`)
        .join(' | ');
    // The colours as the page paints them: the control's border and its field's left bar, and
    // the error and page colours of the scheme in force, each resolved by the browser.
    const painted = (value) => {
      const probe = document.createElement('span');
      probe.style.color = value;
      document.body.append(probe);
      const rgb = getComputedStyle(probe).color;
      probe.remove();
      return rgb;
    };
    const root = getComputedStyle(document.documentElement);
    const colours = { error: painted(root.getPropertyValue('--error')), bg: painted(root.getPropertyValue('--bg')) };
    const control = (selector) => {
      const el = document.querySelector(selector);
      if (!el) return null;
      const style = getComputedStyle(el);
      const field = getComputedStyle(el.closest('.field'));
      return {
        value: el.value,
        invalid: el.getAttribute('aria-invalid'),
        described: described(el),
        border: style.borderTopColor,
        bar: field.borderLeftStyle === 'none' ? null : `${field.borderLeftWidth} ${field.borderLeftColor}`,
      };
    };
    const alerts = [...document.querySelectorAll('[role=alert]')].map((el) => el.textContent.trim());
    return {
      email: control('#email'),
      first_name: control('#field-first_name'),
      topic: control('#field-topic'),
      campaign: document.querySelector('input[type=hidden][name=campaign]')?.value ?? null,
      consent: document.querySelector('#consent')?.checked ?? null,
      colours,
      alerts,
    };
  });
}

// The refused page: the alert says `message`, `marked` is the one control aria-invalid and
// described by it, the others are neither; `kept` is what each control must still hold.
async function checkRefused(page, where, { message, marked, kept }) {
  const state = await formState(page);
  check(
    state.alerts.length === 1 && state.alerts[0] === message,
    `${where}: one alert: ${JSON.stringify(message)}`,
    `alerts: ${JSON.stringify(state.alerts)}`,
  );
  check(await page.getByRole('alert').isVisible(), `${where}: the alert is visible`);
  const { error, bg } = state.colours;
  for (const name of ['email', 'first_name', 'topic']) {
    const control = state[name];
    if (name === marked) {
      check(
        control.invalid === 'true' && control.described === message,
        `${where}: ${name} is aria-invalid="true" and aria-describedby the alert`,
        JSON.stringify(control),
      );
      // Marked for the eye too: its border in the error colour, and the alert's bar beside it,
      // the colour at 3:1 or more against the page (WCAG 1.4.11, a user interface component).
      check(
        control.border === error && control.bar === `4px ${error}` && contrast(error, bg) >= 3,
        `${where}: ${name} is marked for the eye: border and a 4px bar in the error colour ${error}, ${contrast(error, bg).toFixed(1)}:1 against ${bg}`,
        JSON.stringify(control),
      );
    } else {
      check(
        control.border !== error && control.bar === null,
        `${where}: ${name} carries no error mark (border ${control.border}, no bar)`,
        JSON.stringify(control),
      );
      check(
        control.invalid === null && control.described === '',
        `${where}: ${name} is neither aria-invalid nor described by the alert`,
        JSON.stringify(control),
      );
    }
  }
  for (const [name, value] of Object.entries(kept)) {
    const seen = name === 'campaign' ? state.campaign : state[name]?.value;
    check(seen === value, `${where}: ${name} still holds ${JSON.stringify(value)}`, `it holds ${JSON.stringify(seen)}`);
  }
  if (marked) {
    // The accessible description as Chromium computes it (what a screen reader announces).
    const id = marked === 'topic' ? '#field-topic' : '#field-first_name';
    const description = await accessibleDescription(page, id);
    check(description === message, `${where}: Chromium's accessible description of ${marked} is the message`, JSON.stringify(description));
  }
}

// The accessible name and description of the element `selector`, from Chromium's own
// accessibility tree (CDP Accessibility.getPartialAXTree).
async function axNode(page, selector) {
  const session = await page.context().newCDPSession(page);
  try {
    const { root } = await session.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await session.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    if (!nodeId) return null;
    const { nodes } = await session.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false });
    const node = nodes[0];
    const property = (name) => node.properties?.find((p) => p.name === name)?.value?.value;
    return {
      role: node.role?.value,
      name: node.name?.value ?? '',
      description: node.description?.value ?? '',
      ignored: Boolean(node.ignored),
      invalid: property('invalid'),
      required: property('required'),
    };
  } finally {
    await session.detach();
  }
}

async function accessibleDescription(page, selector) {
  return (await axNode(page, selector))?.description ?? null;
}

// The (label, value) pairs the preference page shows under the list's checkbox, and what of
// the values sits in a form control (none may: they are read-only).
async function keptOnPreferences(page) {
  return page.evaluate((list) => {
    const box = document.querySelector(`input[type=checkbox][name=list][value="${list}"]`);
    const block = box?.closest('.checkbox');
    const dl = block?.querySelector('dl');
    const terms = dl ? [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent.trim(), dt.nextElementSibling?.textContent.trim() ?? null]) : null;
    const controls = [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => el.type !== 'hidden' || !['token', 'save', 'all'].includes(el.name))
      .map((el) => ({ tag: el.tagName.toLowerCase(), type: el.type, name: el.name, value: el.value }));
    return {
      ticked: box?.checked ?? null,
      intro: block?.querySelector('p.kept')?.textContent.trim() ?? null,
      terms,
      controls,
    };
  }, LIST);
}

async function checkPreferences(page, where, expected) {
  const seen = await keptOnPreferences(page);
  check(seen.ticked === true, `${where}: ${FIELDS_LIST.name} is ticked`, JSON.stringify(seen));
  check(seen.intro === WORDS.kept, `${where}: says ${JSON.stringify(WORDS.kept)}`, JSON.stringify(seen.intro));
  check(
    JSON.stringify(seen.terms) === JSON.stringify(expected),
    `${where}: shows ${expected.map(([label, value]) => `${label} = ${JSON.stringify(value)}`).join(', ')}`,
    `shows ${JSON.stringify(seen.terms)}`,
  );
  const values = expected.map(([, value]) => value);
  const inControls = seen.controls.filter((control) => values.includes(control.value) || ['first_name', 'topic', 'campaign'].includes(control.name));
  check(
    inControls.length === 0,
    `${where}: the values are read-only (no form control holds or names them)`,
    JSON.stringify(inControls),
  );
}

// Confirms `link` (a /confirm link) in `page` with the button, waits for the welcome mail and
// opens its manage link; returns the manage link.
async function confirmAndManage(page, server, link, address, seen, where) {
  let response = await page.goto(link);
  await checkPage(page, response, `${where}: GET /confirm`, {
    status: 200,
    pathname: '/confirm',
    search: new URL(link).search,
    heading: WORDS.confirm,
  });
  response = await navigateBy(page, () => page.getByRole('button', { name: WORDS.confirmButton, exact: true }).click());
  await checkPage(page, response, `${where}: confirm (click)`, { status: 200, pathname: '/confirmed', search: `?list=${LIST}`, heading: WORDS.confirmed });
  const welcome = await waitForMailLink(server.mailDir, server.base, '/manage', seen, address);
  ok(`${where}: the welcome mail ${welcome.file} has the manage link`);
  response = await page.goto(welcome.link);
  await checkPage(page, response, `${where}: GET /manage`, {
    status: 200,
    pathname: '/manage',
    search: new URL(welcome.link).search,
    heading: WORDS.preferences,
  });
  return welcome.link;
}

// ---- 1. the form with JavaScript off, a refusal, a signup, the values stored

async function jsOffFlow(browser, server, seen) {
  const { base, mailDir } = server;
  const { context, page, consoleErrors } = await jsOffPage(browser, 'fields');

  // Without campaign in the link, the hidden field is empty: its value comes from the link.
  let response = await page.goto(`${base}${formPath()}`);
  await checkPage(page, response, `fields: GET ${formPath()}`, { status: 200, pathname: '/signup', search: `?list=${LIST}`, heading: WORDS.heading });
  check((await formState(page)).campaign === '', `fields: GET ${formPath()}: the hidden campaign is there and empty`);

  const url = formPath('&campaign=spring');
  response = await page.goto(`${base}${url}`);
  await checkPage(page, response, `fields: GET ${url}`, {
    status: 200,
    pathname: '/signup',
    search: `?list=${LIST}&campaign=spring`,
    heading: WORDS.heading,
  });
  const where = `fields: GET ${url}`;
  const email = page.getByLabel('Email address', { exact: true });
  const firstName = page.getByLabel('First name', { exact: true });
  const topic = page.getByRole('combobox', { name: 'Topic (optional)', exact: true });
  check((await firstName.count()) === 1 && (await firstName.isVisible()), `${where}: "First name" is labelled and visible`);
  check(
    (await firstName.getAttribute('id')) === 'field-first_name' &&
      (await firstName.getAttribute('name')) === 'first_name' &&
      (await firstName.getAttribute('type')) === 'text',
    `${where}: the "First name" label names input[type=text][name=first_name]`,
  );
  check((await firstName.getAttribute('maxlength')) === String(MAX), `${where}: First name has maxlength="${MAX}"`, await firstName.getAttribute('maxlength'));
  const firstAx = await axNode(page, '#field-first_name');
  check(
    firstAx?.role === 'textbox' && firstAx.name === 'First name' && firstAx.required === true,
    `${where}: Chromium exposes First name as a required textbox named "First name"`,
    JSON.stringify(firstAx),
  );
  check((await topic.count()) === 1 && (await topic.isVisible()), `${where}: "Topic (optional)" is a labelled, visible select`);
  check((await topic.getAttribute('name')) === 'topic' && (await topic.getAttribute('required')) === null, `${where}: Topic is select[name=topic], not required`);
  const options = await topic.locator('option').evaluateAll((all) => all.map((option) => [option.value, option.textContent.trim()]));
  check(
    JSON.stringify(options) === JSON.stringify([['', WORDS.chooseOne], ...TOPICS.map((t) => [t, t])]),
    `${where}: Topic offers "${WORDS.chooseOne}" (empty) then ${TOPICS.join(', ')}`,
    JSON.stringify(options),
  );
  check((await topic.inputValue()) === '', `${where}: Topic starts on "${WORDS.chooseOne}"`);
  const order = await page.locator('form label').evaluateAll((labels) => labels.map((label) => label.htmlFor));
  check(
    JSON.stringify(order) === JSON.stringify(['email', 'field-first_name', 'field-topic', 'consent', 'website']),
    `${where}: the labels come in the declared order: email, First name, Topic, consent (then the honeypot's)`,
    JSON.stringify(order),
  );
  const campaign = page.locator('input[name=campaign]');
  check(
    (await campaign.count()) === 1 &&
      (await campaign.getAttribute('type')) === 'hidden' &&
      (await campaign.inputValue()) === 'spring' &&
      !(await campaign.isVisible()),
    `${where}: campaign is one hidden input, not visible, holding "spring" from the link`,
  );
  check(
    (await page.getByLabel('Campaign').count()) === 0 && !(await page.locator('main').innerText()).includes('Campaign'),
    `${where}: no label and no text "Campaign" on the page`,
  );
  const textboxes = await page.getByRole('textbox').count();
  check(textboxes === 2, `${where}: two textboxes in the accessibility tree (email, First name): not the hidden field, not the honeypot`, `${textboxes}`);

  // ---- sent with the required field empty
  const address = 'fields-ada@example.com';
  await email.fill(address);
  await topic.selectOption('Go');
  await page.locator('#consent').check();
  response = await navigateBy(page, () => page.getByRole('button', { name: 'Sign up', exact: true }).click());
  await checkPage(page, response, 'fields: sent without First name', { status: 400, pathname: '/api/signup', search: '', heading: WORDS.heading });
  await checkRefused(page, 'fields: sent without First name', {
    message: WORDS.missing('First name'),
    marked: 'first_name',
    kept: { email: address, first_name: '', topic: 'Go', campaign: 'spring' },
  });
  const refusedAx = await axNode(page, '#field-first_name');
  check(refusedAx?.invalid === 'true', 'fields: sent without First name: Chromium exposes First name as invalid', JSON.stringify(refusedAx));

  // ---- filled in (with spaces around it: a value is trimmed) and sent
  await firstName.fill('  Ada  ');
  await page.locator('#consent').check();
  response = await navigateBy(page, () => page.getByRole('button', { name: 'Sign up', exact: true }).click());
  await checkPage(page, response, 'fields: sent with First name', { status: 200, pathname: '/check-inbox', search: `?list=${LIST}`, heading: WORDS.checkInbox });

  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, address);
  ok(`fields: the confirmation mail ${mail.file} to ${address} has the confirm link`);
  const manage = await confirmAndManage(page, server, mail.link, address, seen, 'fields (Ada)');
  await checkPreferences(page, 'fields (Ada): GET /manage', [
    ['First name', 'Ada'],
    ['Topic', 'Go'],
    ['Campaign', 'spring'],
  ]);

  check(consoleErrors.length === 0, 'fields: no console errors (CSP violations) or failed loads with JavaScript off', consoleErrors.join(' | '));
  await context.close();
  return { manage };
}

// ---- 2. keyboard only, JavaScript off

// Tabs from the top of the page until focus leaves it or wraps; returns the elements focused.
async function tabOrder(page, max = 12) {
  await startFromTop(page);
  const order = [];
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    const el = await focused(page);
    if (!el) break;
    if (order.length && describe(order[0]) === describe(el)) break;
    order.push(el);
  }
  return order;
}

async function keyboardFlow(browser, server, seen) {
  const { base, mailDir } = server;
  const { context, page, consoleErrors } = await jsOffPage(browser, 'fields keyboard');
  const url = formPath('&campaign=kbd');
  let response = await page.goto(`${base}${url}`);
  await checkPage(page, response, `fields keyboard: GET ${url}`, {
    status: 200,
    pathname: '/signup',
    search: `?list=${LIST}&campaign=kbd`,
    heading: WORDS.heading,
  });

  const order = await tabOrder(page);
  const orderText = order.map(describe).join(' → ');
  const firstLink = order.findIndex((el) => el.tag === 'a');
  const formOrder = (firstLink < 0 ? order : order.slice(0, firstLink)).map(describe).join(' → ');
  check(
    formOrder ===
      'input[type=email][name=email] → input[type=text][name=first_name] → select[name=topic] → input[type=checkbox][name=consent] → button "Sign up"' &&
      firstLink >= 0 &&
      order.slice(firstLink).every((el) => el.tag === 'a'),
    `fields keyboard: Tab order is ${orderText}`,
    'expected email → First name → Topic → consent → "Sign up", then links only',
  );
  check(!order.some((el) => el.name === 'website' || el.name === 'campaign'), 'fields keyboard: Tab never reaches the honeypot or the hidden field');

  // Fill by keyboard, leaving First name empty; Space on the button sends the form.
  const address = 'fields-keys@example.com';
  const trail = [];
  const press = async (key) => {
    await page.keyboard.press(key);
    trail.push(`${key}→${describe(await focused(page))}`);
  };
  const at = async (want, what) => {
    const el = describe(await focused(page));
    check(el === want, `fields keyboard: ${what} (${el})`, trail.join(' '));
  };
  await startFromTop(page);
  await press('Tab');
  await at('input[type=email][name=email]', 'the first Tab focuses the email field');
  await page.keyboard.type(address);
  await press('Tab');
  await at('input[type=text][name=first_name]', 'the next Tab focuses First name');
  await press('Tab');
  await at('select[name=topic]', 'the next Tab focuses Topic');
  const topic = page.locator('#field-topic');
  await press('ArrowDown');
  check((await topic.inputValue()) === TOPICS[0], `fields keyboard: ArrowDown on Topic chooses "${TOPICS[0]}"`, await topic.inputValue());
  await press('ArrowDown');
  check((await topic.inputValue()) === TOPICS[1], `fields keyboard: ArrowDown again chooses "${TOPICS[1]}"`, await topic.inputValue());
  await press('ArrowUp');
  await press('ArrowDown');
  await press('ArrowDown');
  check((await topic.inputValue()) === TOPICS[2], `fields keyboard: ArrowUp, ArrowDown, ArrowDown choose "${TOPICS[2]}"`, await topic.inputValue());
  await press('Tab');
  await at('input[type=checkbox][name=consent]', 'the next Tab focuses consent');
  await press('Space');
  check(await page.locator('#consent').isChecked(), 'fields keyboard: Space ticks consent');
  await press('Tab');
  await at('button "Sign up"', 'the next Tab focuses "Sign up"');
  response = await navigateBy(page, () => page.keyboard.press('Space'));
  await checkPage(page, response, 'fields keyboard: Space on "Sign up" without First name', {
    status: 400,
    pathname: '/api/signup',
    search: '',
    heading: WORDS.heading,
  });
  await checkRefused(page, 'fields keyboard: Space on "Sign up" without First name', {
    message: WORDS.missing('First name'),
    marked: 'first_name',
    kept: { email: address, first_name: '', topic: TOPICS[2], campaign: 'kbd' },
  });

  // The marked field by keyboard: Tab, Tab, type; the topic and the ticked consent kept; Enter.
  trail.length = 0;
  await startFromTop(page);
  await press('Tab');
  await at('input[type=email][name=email]', 'on the refused form, the first Tab focuses the email field');
  await press('Tab');
  await at('input[type=text][name=first_name]', 'the next Tab focuses the marked First name');
  await page.keyboard.type('Grace');
  await press('Tab');
  await at('select[name=topic]', 'the next Tab focuses Topic, still on the kept choice');
  await press('Tab');
  await at('input[type=checkbox][name=consent]', 'the next Tab focuses consent');
  check(await page.locator('#consent').isChecked(), 'fields keyboard: consent is still ticked on the refused form, as it was left');
  await press('Tab');
  await at('button "Sign up"', 'the next Tab focuses "Sign up"');
  response = await navigateBy(page, () => page.keyboard.press('Enter'));
  await checkPage(page, response, 'fields keyboard: Enter on "Sign up"', { status: 200, pathname: '/check-inbox', search: `?list=${LIST}`, heading: WORDS.checkInbox });

  const mail = await waitForMailLink(mailDir, base, '/confirm', seen, address);
  ok(`fields keyboard: the confirmation mail ${mail.file} to ${address} has the confirm link`);
  await confirmAndManage(page, server, mail.link, address, seen, 'fields keyboard (Grace)');
  await checkPreferences(page, 'fields keyboard (Grace): GET /manage', [
    ['First name', 'Grace'],
    ['Topic', TOPICS[2]],
    ['Campaign', 'kbd'],
  ]);
  check(consoleErrors.length === 0, 'fields keyboard: no console errors (CSP violations) or failed loads', consoleErrors.join(' | '));
  await context.close();
}

// ---- 3. refusals: too long, not among the options, a hidden value too long

async function refusalsFlow(browser, server, seen) {
  const { base, mailDir } = server;
  const refused = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } }); // JavaScript on
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  const open = async (query, label) => {
    const response = await page.goto(`${base}${formPath(query)}`);
    check(response.status() === 200, `${label}: GET ${formPath(query)} 200`);
  };
  const send = () => navigateBy(page, () => page.getByRole('button', { name: 'Sign up', exact: true }).click());

  // The browser stops typing at maxlength.
  let where = 'fields too long';
  await open('', where);
  const firstName = page.locator('#field-first_name');
  await firstName.click();
  await page.keyboard.type('B'.repeat(MAX + 5));
  check((await firstName.inputValue()) === 'B'.repeat(MAX), `${where}: typing ${MAX + 5} characters keeps ${MAX} (maxlength)`, await firstName.inputValue());

  // Without the attribute (a page altered, or another client), the server refuses.
  let address = 'fields-too-long@example.com';
  refused.push(address);
  const long = 'B'.repeat(MAX + 1);
  await firstName.evaluate((el) => el.removeAttribute('maxlength'));
  await firstName.fill(long);
  await page.locator('#email').fill(address);
  await page.locator('#field-topic').selectOption('Rust');
  await page.locator('#consent').check();
  let response = await send();
  check(response.status() === 400 && new URL(page.url()).pathname === '/api/signup', `${where}: ${MAX + 1} characters: 400, the form again`, `${response.status()} ${page.url()}`);
  await checkRefused(page, `${where}: ${MAX + 1} characters`, {
    message: WORDS.invalid('First name'),
    marked: 'first_name',
    kept: { email: address, first_name: long, topic: 'Rust', campaign: '' },
  });

  // A value not among the options: the "Rust" option's value made lower case (case counts).
  where = 'fields not an option';
  address = 'fields-not-an-option@example.com';
  refused.push(address);
  await open('&campaign=spring', where);
  await page.locator('#email').fill(address);
  await page.locator('#field-first_name').fill('Linus');
  await page.locator('#field-topic option', { hasText: 'Rust' }).evaluate((option) => {
    option.value = 'rust';
  });
  await page.locator('#field-topic').selectOption('rust');
  check((await page.locator('#field-topic').inputValue()) === 'rust', `${where}: the altered select holds "rust"`);
  await page.locator('#consent').check();
  response = await send();
  check(response.status() === 400 && new URL(page.url()).pathname === '/api/signup', `${where}: topic "rust": 400, the form again`, `${response.status()} ${page.url()}`);
  await checkRefused(page, `${where}: topic "rust"`, {
    message: WORDS.invalid('Topic'),
    marked: 'topic',
    // "rust" matches no option, so the select shows "Choose one" again.
    kept: { email: address, first_name: 'Linus', topic: '', campaign: 'spring' },
  });

  // A hidden value too long, from the link.
  where = 'fields hidden too long';
  address = 'fields-hidden-long@example.com';
  refused.push(address);
  const campaign = 'c'.repeat(HIDDEN_MAX + 1);
  await open(`&campaign=${campaign}`, where);
  check((await formState(page)).campaign === campaign, `${where}: the link's ${HIDDEN_MAX + 1}-character campaign is in the form`);
  await page.locator('#email').fill(address);
  await page.locator('#field-first_name').fill('Hedy');
  await page.locator('#consent').check();
  response = await send();
  check(response.status() === 400, `${where}: 400`, `${response.status()}`);
  await checkRefused(page, where, {
    message: WORDS.invalid('Campaign'),
    marked: null,
    kept: { email: address, first_name: 'Hedy', topic: '', campaign },
  });
  await context.close();

  // ---- directly, as a JSON client
  const valid = { consent: 'yes', list: LIST, first_name: 'Ada', topic: 'Go', campaign: 'json' };
  const cases = [
    ['first_name of 21 characters', { first_name: 'x'.repeat(MAX + 1) }, 'first_name'],
    ['first_name of 21 non-ASCII characters', { first_name: 'é'.repeat(MAX + 1) }, 'first_name'],
    ['first_name with a line break', { first_name: 'Ada\nLovelace' }, 'first_name'],
    ['first_name missing', { first_name: undefined }, 'first_name'],
    ['first_name only spaces', { first_name: '   ' }, 'first_name'],
    ['first_name null', { first_name: null }, 'first_name'],
    ['first_name a number', { first_name: 7 }, 'first_name'],
    ['topic "Python" (not an option)', { topic: 'Python' }, 'topic'],
    ['topic "go" (case counts)', { topic: 'go' }, 'topic'],
    [`campaign of ${HIDDEN_MAX + 1} characters`, { campaign: 'c'.repeat(HIDDEN_MAX + 1) }, 'campaign'],
  ];
  let n = 0;
  for (const [what, change, field] of cases) {
    n += 1;
    const email = `fields-json-refused-${n}@example.com`;
    refused.push(email);
    const body = { ...valid, ...change, email };
    const answer = await postJson(base, body);
    check(
      answer.status === 400 && answer.body?.ok === false && answer.body?.error === 'invalid_field' && answer.body?.field === field,
      `fields JSON: ${what}: 400 invalid_field naming ${field}`,
      `${answer.status} ${JSON.stringify(answer.body)}`,
    );
  }
  const accepted = [
    ['first_name of exactly 20 characters', { first_name: 'x'.repeat(MAX) }],
    ['first_name of 20 non-ASCII characters', { first_name: 'é'.repeat(MAX) }],
    ...TOPICS.map((t) => [`topic "${t}"`, { topic: t }]),
    ['no topic (optional)', { topic: undefined }],
    ['an empty topic (no value)', { topic: '' }],
    [`campaign of exactly ${HIDDEN_MAX} characters`, { campaign: 'c'.repeat(HIDDEN_MAX) }],
    ['a name the list does not declare (ignored)', { colour: 'blue' }],
  ];
  let last = '';
  for (const [what, change] of accepted) {
    n += 1;
    last = `fields-json-accepted-${n}@example.com`;
    const answer = await postJson(base, { ...valid, ...change, email: last });
    check(answer.status === 202 && answer.body?.ok === true, `fields JSON: ${what}: 202`, `${answer.status} ${JSON.stringify(answer.body)}`);
  }
  // Mail goes out in the order the signups were stored: once the last accepted one is mailed,
  // a refused one that had been stored would have been mailed before it.
  await waitForMailLink(mailDir, base, '/confirm', seen, last);
  const mailed = fs
    .readdirSync(mailDir)
    .filter((name) => name.endsWith('.eml'))
    .map((name) => readMail(path.join(mailDir, name)).headers.to || '')
    .filter((to) => refused.some((address) => to.includes(address)));
  check(mailed.length === 0, `fields: none of the ${refused.length} refused signups was mailed`, mailed.join(', '));
}

// ---- 4. and 5. axe and screenshots

async function showsFieldError(page, where) {
  await checkRefused(page, where, {
    message: WORDS.missing('First name'),
    marked: 'first_name',
    kept: { email: 'fields-axe@example.com', topic: 'Zig', campaign: 'spring' },
  });
}

async function namesFields(page, where) {
  const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  check(text.includes(WORDS.privacyFields), `${where}: says ${JSON.stringify(WORDS.privacyFields)}`, text);
}

const showsValues = (expected) => (page, where) => checkPreferences(page, where, expected);

async function showsFields(page, where) {
  check(
    (await page.getByLabel('First name', { exact: true }).isVisible()) &&
      (await page.getByRole('combobox', { name: 'Topic (optional)', exact: true }).isVisible()),
    `${where}: First name and Topic are labelled and visible`,
  );
}

async function axeMatrix(browser, specs, shotDir) {
  fs.mkdirSync(shotDir, { recursive: true });
  const problems = [];
  const shots = [];
  for (const theme of THEMES) {
    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ colorScheme: theme, viewport });
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      const pageErrors = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
      });
      page.on('pageerror', (error) => pageErrors.push(String(error)));
      for (const spec of specs) {
        const where = `fields ${spec.name} ${theme} ${viewport.width}px`;
        let response = await page.goto(spec.url);
        if (spec.submit) response = await navigateBy(page, () => spec.submit(page));
        check(response?.status() === spec.status, `${where}: status ${spec.status}`, `got ${response?.status()} at ${page.url()}`);
        const h1 = (await page.locator('h1').allInnerTexts()).map((text) => text.trim());
        check(h1.length === 1 && h1[0] === spec.heading, `${where}: h1 "${spec.heading}"`, JSON.stringify(h1));
        for (const extra of spec.checks) await extra(page, where);
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        check(scrollWidth <= viewport.width, `${where}: no horizontal scroll (scrollWidth ${scrollWidth})`);
        const result = await runAxe(page);
        const scheme = await page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
        if (scheme !== theme) throw new CheckFailed(`${where}: the page sees prefers-color-scheme ${scheme}`);
        const lines = describeViolations(result.violations).map((line) => `${where} ${page.url().replace(/token=[^&]+/, 'token=…')}: ${line}`);
        problems.push(...lines);
        const shot = path.join(shotDir, `fields-${spec.name}-${theme}-${viewport.width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        shots.push(shot);
        if (lines.length === 0) {
          ok(`${where}: axe ${result.ran} rules, no violation${result.incomplete.length ? ` (to review: ${result.incomplete.map((rule) => rule.id).join(', ')})` : ''}`);
        } else {
          console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
        }
      }
      check(pageErrors.length === 0, `fields ${theme} ${viewport.width}px: no console errors`, pageErrors.join(' | '));
      await context.close();
    }
  }
  check(
    problems.length === 0,
    `fields: axe found no violation (${specs.length} pages × ${THEMES.length} themes × ${VIEWPORTS.length} widths)`,
    `${problems.length} violation(s):\n  ${problems.join('\n  ')}`,
  );
  const missing = shots.filter((shot) => !fs.existsSync(shot) || fs.statSync(shot).size === 0);
  check(missing.length === 0, `fields: ${shots.length} screenshots in ${shotDir} (fields-*.png)`, `missing: ${missing.join(', ')}`);
}

// The whole module: its own server (one list with fields), the flows, the axe matrix.
export async function fieldsFlow(browser, binary, tmp, shotDir) {
  const server = await startServer(binary, path.join(tmp, 'fields'), 'fields server', [FIELDS_LIST], {
    signup: ['rate_limits = [ { window = "10m", max = 200 } ]'],
  });
  const seen = new Set();
  const { manage } = await jsOffFlow(browser, server, seen);
  await keyboardFlow(browser, server, seen);
  await refusalsFlow(browser, server, seen);

  const form = `${server.base}${formPath('&campaign=spring')}`;
  const specs = [
    { name: 'form', url: form, status: 200, heading: WORDS.heading, checks: [showsFields] },
    {
      name: 'form-error',
      url: form,
      // Everything but the required First name.
      submit: async (page) => {
        await page.getByLabel('Email address', { exact: true }).fill('fields-axe@example.com');
        await page.locator('#field-topic').selectOption('Zig');
        await page.locator('#consent').check();
        await page.getByRole('button', { name: 'Sign up', exact: true }).click();
      },
      status: 400,
      heading: WORDS.heading,
      checks: [showsFieldError],
    },
    {
      name: 'preferences',
      url: manage,
      status: 200,
      heading: WORDS.preferences,
      checks: [showsValues([['First name', 'Ada'], ['Topic', 'Go'], ['Campaign', 'spring']])],
    },
    { name: 'privacy', url: `${server.base}/privacy?list=${LIST}`, status: 200, heading: WORDS.privacy, checks: [namesFields] },
  ];
  await axeMatrix(browser, specs, shotDir);
  await server.stop();
}

// Alone: `node tests/browser/fields.mjs` (after `cargo test --no-run`), like e2e.mjs finds its parts.
if (isMain(import.meta.url)) await runAlone('fields', fieldsFlow);
