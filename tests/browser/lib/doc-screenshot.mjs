// The screenshot in docs/install.md ("The one edit") is one the accessibility matrix takes: the
// signup page of the branded list "navy" (site_name, site_url, accent_color), light, 1280 px.
// After the matrix ran (and checked that page's brand), the committed copy must still show that
// page: the matrix produced it, and the copy is a PNG of the same size, small enough for a
// repository, referenced with alt text. A page that changed size, or a shot the matrix no longer
// takes, fails here with the command that refreshes the copy.

import fs from 'node:fs';
import path from 'node:path';

import { check } from './checks.mjs';

export const DOC_SCREENSHOT = {
  doc: 'docs/install.md',
  image: 'docs/branded-signup.png',
  // a11y.mjs names its screenshots <page>-<theme>-<width>-<list suffix>.png
  shot: 'signup-list-light-1280-navy.png',
  maxBytes: 150 * 1024,
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// Width and height from a PNG's IHDR chunk, or null for a file that is not a PNG.
function pngSize(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    return null;
  }
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

export function checkDocScreenshot(root, shotDir) {
  const { doc, image, shot, maxBytes } = DOC_SCREENSHOT;
  const produced = path.join(shotDir, shot);
  const committed = path.join(root, image);
  const refresh = `refresh it: cp ${path.relative(root, produced)} ${image}`;
  check(fs.existsSync(produced), `docs screenshot: the matrix still takes ${shot}`, `${produced} is missing`);
  check(fs.existsSync(committed), `docs screenshot: ${image} exists`, refresh);
  const want = pngSize(produced);
  const got = pngSize(committed);
  check(
    got !== null && got.width === want.width && got.height === want.height,
    `docs screenshot: ${image} is a PNG of the page's size (${want.width}×${want.height})`,
    `${image} is ${got ? `${got.width}×${got.height}` : 'not a PNG'}: ${refresh}`,
  );
  const bytes = fs.statSync(committed).size;
  check(bytes <= maxBytes, `docs screenshot: ${image} is ${Math.round(bytes / 1024)} KiB (at most ${maxBytes / 1024})`);
  const markdown = fs.readFileSync(path.join(root, doc), 'utf8');
  const relative = path.relative(path.dirname(path.join(root, doc)), committed);
  const reference = new RegExp(`!\\[([^\\]]*)\\]\\(${relative.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`).exec(markdown);
  check(
    reference !== null && reference[1].trim().length > 0,
    `docs screenshot: ${doc} shows ${relative} with alt text`,
    reference ? 'the alt text is empty' : `no ![…](${relative}) in ${doc}`,
  );
}
