// Mail: a small MIME reader for the .eml files of signupd's file transport, and a poller that
// waits for the next mail carrying a given link.

import fs from 'node:fs';
import path from 'node:path';

import { CheckFailed, sleep } from './checks.mjs';

const MAIL_CAP_MS = 20_000;

function decodeQuotedPrintable(text) {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes = [];
  for (let i = 0; i < soft.length; i += 1) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'latin1'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseHeaders(block) {
  const headers = {};
  for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function topHeaders(raw) {
  const normal = raw.replace(/\r\n/g, '\n');
  const split = normal.indexOf('\n\n');
  return parseHeaders(split < 0 ? normal : normal.slice(0, split));
}

// Returns the leaf parts of a message: [{ type, encoding, text }], bodies decoded.
export function mimeParts(raw) {
  const normal = raw.replace(/\r\n/g, '\n');
  const split = normal.indexOf('\n\n');
  const headers = parseHeaders(split < 0 ? normal : normal.slice(0, split));
  const body = split < 0 ? '' : normal.slice(split + 2);
  const type = (headers['content-type'] || 'text/plain').split(';')[0].trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'])?.[1];
    if (!boundary) return [];
    return body
      .split(`--${boundary}`)
      .slice(1)
      .filter((chunk) => !chunk.startsWith('--'))
      .flatMap((chunk) => mimeParts(chunk.replace(/^\n/, '')));
  }
  const encoding = (headers['content-transfer-encoding'] || '7bit').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(body);
  else if (encoding === 'base64') text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return [{ type, encoding, text }];
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// One .eml file: its top-level headers (lower-case names) and its plain-text part, decoded.
export function readMail(file) {
  const raw = fs.readFileSync(file, 'latin1');
  const plain = mimeParts(raw).find((part) => part.type === 'text/plain');
  return { headers: topHeaders(raw), text: plain ? plain.text : '' };
}

// Polls the mail folder until a not-yet-seen .eml file has a plain-text part with a link to
// `${base}${route}?token=…` (and, given `to`, is addressed to it). Returns
// { file, link, encoding, htmlHasLink, headers, text } (text: the plain-text part) and marks
// the file as seen.
export async function waitForMailLink(mailDir, base, route, seen, to) {
  const pattern = new RegExp(`${escapeRegExp(base)}${escapeRegExp(route)}\\?token=[^\\s<>"']+`);
  const deadline = Date.now() + MAIL_CAP_MS;
  while (Date.now() < deadline) {
    const files = fs.existsSync(mailDir)
      ? fs.readdirSync(mailDir).filter((name) => name.endsWith('.eml') && !seen.has(name)).sort()
      : [];
    for (const name of files) {
      const raw = fs.readFileSync(path.join(mailDir, name), 'latin1');
      const headers = topHeaders(raw);
      if (to && !(headers.to || '').includes(to)) continue;
      const parts = mimeParts(raw);
      const plain = parts.find((part) => part.type === 'text/plain');
      const link = plain && pattern.exec(plain.text)?.[0];
      if (link) {
        const html = parts.find((part) => part.type === 'text/html');
        const htmlHasLink = Boolean(html && html.text.replace(/&amp;/g, '&').includes(link));
        seen.add(name);
        return { file: name, link, encoding: plain.encoding, htmlHasLink, headers, text: plain.text };
      }
    }
    await sleep(100);
  }
  const present = fs.existsSync(mailDir) ? fs.readdirSync(mailDir).join(', ') : '(no mail folder)';
  throw new CheckFailed(
    `no new .eml${to ? ` to ${to}` : ''} with a ${route} link in ${mailDir} within ${MAIL_CAP_MS / 1000} s (files: ${present || 'none'})`,
  );
}
