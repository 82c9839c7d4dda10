// The check vocabulary of the browser suite: one "ok" line per passed check, a CheckFailed
// (a message for people, no stack) for a failed one.

export class CheckFailed extends Error {}

export const counts = { passed: 0 };

export function ok(name) {
  counts.passed += 1;
  console.log(`ok   ${name}`);
}

export function check(condition, name, detail) {
  if (!condition) throw new CheckFailed(detail === undefined ? name : `${name}: ${detail}`);
  ok(name);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// A cap for Promise.race that does not keep node alive once the race is decided.
export const cap = (ms) => new Promise((resolve) => setTimeout(() => resolve(null), ms).unref());
