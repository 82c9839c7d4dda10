// Running one browser flow on its own (`node tests/browser/status.mjs`, `node
// tests/browser/surge.mjs`), as e2e.mjs would run it: the debug signupd (SIGNUPD_BIN, else
// CARGO_TARGET_DIR's or target/), Debian's Chromium (CHROMIUM), a temporary folder kept only on
// failure, screenshots in target/browser-screenshots/, and the servers' last log lines on failure.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { CheckFailed, check, counts } from './checks.mjs';
import { servers } from './server.mjs';

// Whether the module at `moduleUrl` (its import.meta.url) is the script node was asked to run.
export function isMain(moduleUrl) {
  return moduleUrl === pathToFileURL(process.argv[1]).href;
}

// Runs `flow(browser, binary, tmp, screenshots)` and exits 1 on its first failed check.
export async function runAlone(name, flow) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
  const binary = process.env.SIGNUPD_BIN || path.join(targetDir, 'debug', 'signupd');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `signupd-${name}-`));
  let browser;
  let failure = null;
  try {
    check(fs.existsSync(binary), `signupd binary exists (${binary})`, `${binary} is missing; run cargo test --no-run`);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    await flow(browser, binary, tmp, path.join(root, 'target', 'browser-screenshots'));
  } catch (error) {
    failure = error;
  }
  if (browser) await browser.close().catch(() => {});
  await Promise.all(servers.map((server) => server.kill()));
  if (failure) {
    console.log(`FAIL ${failure instanceof CheckFailed ? failure.message : failure.stack || failure}`);
    for (const server of servers) console.log(`--- last lines of ${server.log}\n${server.tail()}\n---`);
    console.log(`temp folder kept: ${tmp}`);
    console.log(`${name}: ${counts.passed} passed, 1 failed`);
    process.exit(1);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`${name}: ${counts.passed} passed, 0 failed`);
}
