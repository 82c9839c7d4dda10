// axe-core in the page under test. The pages' CSP (default-src 'none') blocks an injected
// <script>, so the axe source is evaluated through Playwright's page.evaluate, which goes over
// the DevTools protocol (Runtime.evaluate) and is not subject to the page's CSP.

import fs from 'node:fs';
import { createRequire } from 'node:module';

import { CheckFailed, ok } from './checks.mjs';

const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const axeVersion = require('axe-core/package.json').version;

// Runs every rule axe enables by default (WCAG 2.0–2.2 A/AA and best practices) on the
// current document. Returns { engine, ran, violations: [{ id, impact, help, nodes: [{ target,
// summary }] }], incomplete: same shape } as plain data.
export async function runAxe(page) {
  const loaded = await page.evaluate(() => typeof window.axe === 'object');
  if (!loaded) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const shape = (results) =>
      results.map((rule) => ({
        id: rule.id,
        impact: rule.impact,
        help: rule.help,
        nodes: rule.nodes.map((node) => ({ target: node.target.join(' '), summary: node.failureSummary || '' })),
      }));
    const result = await window.axe.run(document, { resultTypes: ['violations', 'incomplete'] });
    return {
      engine: `${result.testEngine.name} ${result.testEngine.version}`,
      ran: result.passes.length + result.violations.length + result.incomplete.length + result.inapplicable.length,
      passed: result.passes.map((rule) => rule.id),
      violations: shape(result.violations),
      incomplete: shape(result.incomplete),
    };
  });
}

// One line per offending element: "rule (impact) selector: summary".
export function describeViolations(violations) {
  return violations.flatMap((rule) =>
    rule.nodes.map((node) => `${rule.id} (${rule.impact}) ${node.target}: ${node.summary.replace(/\s+/g, ' ').trim()}`),
  );
}

// Runs axe on a page opened in colour scheme `theme` (a page that does not see that scheme
// fails the run: the matrix would not test what it says), says how it went, and returns the
// result and one line per violation, each starting with `at` (by default `where`).
export async function axeInTheme(page, theme, where, at = where) {
  const result = await runAxe(page);
  const scheme = await page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  if (scheme !== theme) throw new CheckFailed(`${where}: the page sees prefers-color-scheme ${scheme}`);
  const lines = describeViolations(result.violations).map((line) => `${at}: ${line}`);
  if (lines.length === 0) {
    const review = result.incomplete.length ? ` (to review: ${result.incomplete.map((rule) => rule.id).join(', ')})` : '';
    ok(`${where}: axe ${result.ran} rules, no violation${review}`);
  } else {
    console.log(`FAIL ${where}: ${lines.length} axe violation(s)`);
  }
  return { result, lines };
}
