// A real signupd: target/debug/signupd serving on a free loopback port with the file mail
// transport, its own config, data folder and log inside the run's temp folder.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { cap, check, sleep } from './checks.mjs';

const READY_CAP_MS = 30_000;
const EXIT_CAP_MS = 35_000;

// Every server started, so that whatever ends the process can stop them and print their logs.
export const servers = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Lines of TOML for one [[lists]] table from a plain object (strings, numbers, booleans and
// arrays of strings); `fields`, an array of plain objects, becomes the list's [[lists.fields]]
// tables, after its own keys.
function listToml(list) {
  const { fields = [], ...keys } = list;
  const pairs = (object) => Object.entries(object).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  return ['[[lists]]', ...pairs(keys), ...fields.flatMap((field) => ['[[lists.fields]]', ...pairs(field)])];
}

// Starts `binary serve` for `lists` (objects of [[lists]] keys) under `dir`, waits for
// GET /readyz 200, and returns { name, base, metricsBase, mailDir, log, stop() }.
// `signup` is extra TOML for the [signup] table (the a11y run signs up more than the default
// rate limit allows from one client); `metrics` opens the metrics listener (metricsBase);
// `extra` is lines of TOML appended after the [[lists]] tables, for other top-level tables
// such as [[api_tokens]] (anything after a table header belongs to it, so they go last).
export async function startServer(binary, dir, name, lists, { signup = [], metrics = false, extra = [] } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const metricsPort = metrics ? await freePort() : null;
  const metricsBase = metrics ? `http://127.0.0.1:${metricsPort}` : null;
  const dataDir = path.join(dir, 'data');
  const mailDir = path.join(dataDir, 'mail');
  const configPath = path.join(dir, 'signupd.toml');
  fs.writeFileSync(
    configPath,
    [
      '[server]',
      `listen = "127.0.0.1:${port}"`,
      `public_url = ${JSON.stringify(base)}`,
      ...(metrics ? [`metrics_listen = "127.0.0.1:${metricsPort}"`] : []),
      '[storage]',
      `data_dir = ${JSON.stringify(dataDir)}`,
      '[mail]',
      `file_dir = ${JSON.stringify(mailDir)}`,
      ...(signup.length ? ['[signup]', ...signup] : []),
      ...lists.flatMap(listToml),
      ...extra,
      '',
    ].join('\n'),
  );

  const log = path.join(dir, 'signupd.log');
  const logFd = fs.openSync(log, 'w');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SIGNUPD_')));
  const child = spawn(binary, ['serve', '--config', configPath], { stdio: ['ignore', logFd, logFd], env });
  fs.closeSync(logFd);
  let exitInfo = null;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
    child.on('error', (error) => {
      exitInfo = { code: null, signal: null, error };
      resolve(exitInfo);
    });
  });
  const server = {
    name,
    base,
    metricsBase,
    mailDir,
    log,
    child,
    running: () => child.exitCode === null && child.signalCode === null && !exitInfo,
    // SIGTERM, then checks the graceful exit (SPEC: finish in-flight work, exit 0).
    async stop() {
      child.kill('SIGTERM');
      const exit = await Promise.race([exited, cap(EXIT_CAP_MS)]);
      check(exit !== null, `${name}: signupd exits within ${EXIT_CAP_MS / 1000} s of SIGTERM`);
      check(exit.code === 0, `${name}: signupd exits 0 after SIGTERM`, JSON.stringify(exit));
    },
    // For the failure path: no checks, SIGKILL if SIGTERM is not enough.
    async kill() {
      if (!server.running()) return;
      child.kill('SIGTERM');
      if (!(await Promise.race([exited, cap(5000)]))) child.kill('SIGKILL');
    },
    tail(lines = 30) {
      try {
        return fs.readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '(no server log)';
      }
    },
  };
  servers.push(server);

  const readyDeadline = Date.now() + READY_CAP_MS;
  let ready = false;
  let lastAnswer = 'no answer';
  while (!ready && !exitInfo && Date.now() < readyDeadline) {
    try {
      const answer = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      lastAnswer = `status ${answer.status}`;
      ready = answer.status === 200;
    } catch (error) {
      lastAnswer = error.cause?.code || error.message;
    }
    if (!ready) await sleep(100);
  }
  check(
    ready,
    `${name}: signupd serve is ready on ${base} (GET /readyz 200)`,
    exitInfo ? `signupd exited early (${JSON.stringify(exitInfo)})` : `not ready within ${READY_CAP_MS / 1000} s (${lastAnswer})`,
  );
  return server;
}

// POSTs `fields` to `url` as a plain HTML form would, without following the redirect.
export async function postForm(url, fields) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}
