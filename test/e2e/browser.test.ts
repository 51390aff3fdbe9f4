// report.html and compare.html in headless Chromium (Debian's chromium, driven by playwright-core),
// opened from disk: no console error, no network request, every chart visible, a screenshot kept
// in test-artifacts/; and a run full of hostile names in which no script runs.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { CLI, FIXTURES, ROOT, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE, slowerCopy } from '../support/runs.js';
import { CHROMIUM, requireSystem } from '../support/system.js';

const ARTIFACTS = join(ROOT, 'test-artifacts');

interface PageCheck {
  consoleErrors: string[];
  requests: string[];
  dialogs: string[];
  charts: number;
  visibleCharts: number;
  text: string;
  images: number;
  scripts: number;
  /** Each stage section of report.html: where its answer and its first chart start on the page. */
  sections: { answer: string; answerTop: number | null; chartTop: number | null }[];
}

async function open(browser: Browser, file: string, screenshot: string): Promise<PageCheck> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const url = pathToFileURL(file).href;
  const check: PageCheck = {
    consoleErrors: [],
    requests: [],
    dialogs: [],
    charts: 0,
    visibleCharts: 0,
    text: '',
    images: 0,
    scripts: 0,
    sections: [],
  };
  page.on('console', (m) => {
    if (m.type() === 'error') check.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => check.consoleErrors.push(e.message));
  page.on('request', (r) => {
    if (r.url() !== url) check.requests.push(r.url());
  });
  page.on('dialog', (d) => {
    check.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForTimeout(300);
  const charts = page.locator('figure.chart svg');
  check.charts = await charts.count();
  for (let i = 0; i < check.charts; i++) {
    const c = charts.nth(i);
    await c.scrollIntoViewIfNeeded();
    const box = await c.boundingBox();
    if ((await c.isVisible()) && box && box.width > 50 && box.height > 50) check.visibleCharts += 1;
  }
  await page.evaluate('window.scrollTo(0, 0)');
  const sections = page.locator('section.stage');
  for (let i = 0; i < (await sections.count()); i++) {
    const answer = sections.nth(i).locator('.answer').first();
    const chart = sections.nth(i).locator('figure.chart').first();
    check.sections.push({
      answer: (await answer.count()) > 0 ? await answer.innerText() : '',
      answerTop: (await answer.count()) > 0 ? ((await answer.boundingBox())?.y ?? null) : null,
      chartTop: (await chart.count()) > 0 ? ((await chart.boundingBox())?.y ?? null) : null,
    });
  }
  check.text = await page.locator('body').innerText();
  check.images = await page.locator('img').count();
  check.scripts = await page.locator('script').count();
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
  await page.close();
  return check;
}

describe('reports in headless Chromium', { skip: requireSystem('chromium') }, () => {
  let browser: Browser;
  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
  });

  it('report.html: no console error, no request, every chart visible', async () => {
    const dir = join(tempDir(), 'run');
    cpSync(REPORT_FIXTURE, dir, { recursive: true });
    const r = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const page = await open(browser, join(dir, 'report.html'), 'report.png');
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(page.requests, []);
    assert.equal(page.charts, 7);
    assert.equal(page.visibleCharts, 7);
    assert.match(page.text, /Chosen config/);
    assert.ok(existsSync(join(ARTIFACTS, 'report.png')));
    // Each stage shows its answer above its charts.
    assert.equal(page.sections.length, 3);
    for (const s of page.sections) {
      assert.match(s.answer, /^Answer: \w+=\S+ at /);
      assert.ok(
        s.answerTop !== null && s.chartTop !== null && s.answerTop < s.chartTop,
        `answer at ${s.answerTop}, first chart at ${s.chartTop}`,
      );
    }
    assert.ok(!page.text.includes('empty_cache calls'), 'no empty_cache column in the arena compare');
  });

  it('compare.html: no console error, no request, the chart visible', async () => {
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'compare', REPORT_FIXTURE, slowerCopy(1.5), '--out', out], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    const page = await open(browser, join(out, 'compare.html'), 'compare.png');
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(page.requests, []);
    assert.equal(page.charts, 1);
    assert.equal(page.visibleCharts, 1);
    assert.match(page.text, /slower/);
  });

  it('hostile names: no script runs, no dialog opens, and the text shows literally', async () => {
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'run', join(FIXTURES, 'experiments', 'hostile.yaml'), '--out', out], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    const base = join(out, '_img_src_x_onerror_alert_1__');
    const dir = join(base, readdirSync(base)[0]!);
    const page = await open(browser, join(dir, 'report.html'), 'hostile.png');
    assert.deepEqual(page.dialogs, []);
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(page.requests, [], 'the <img src=x> was not loaded');
    assert.equal(page.images, 0);
    assert.equal(page.scripts, 0);
    assert.ok(page.text.includes('tunebench: <img src=x onerror=alert(1)>'), 'the experiment name shows literally');
    assert.ok(page.text.includes('</script><script>alert(2)</script>'), 'the parameter value shows literally');
    assert.ok(page.text.includes('<svg onload=alert(3)>'), 'the stage name shows literally');
    assert.ok(page.text.includes('<b onmouseover=alert(5)>bold</b>'));
    assert.equal(page.visibleCharts, page.charts);
  });
});
