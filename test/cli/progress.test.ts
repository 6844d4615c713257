// The progress line of long commands, and that nothing is drawn off a terminal.
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { progressLine, startProgress, stepLine } from '../../src/cli/progress.js';

describe('progressLine', () => {
  it('shows the share of the total, the rate and the time left', () => {
    expect(progressLine('scan.json', 50_000_000, 200_000_000, 2_000)).toBe(
      'scan.json: 25% of 200.0 MB, 25.0 MB/s, 6 s left',
    );
    expect(progressLine('big.json', 1_000_000_000, 5_000_000_000, 100_000)).toBe(
      'big.json: 20% of 5.0 GB, 10.0 MB/s, 6 min 40 s left',
    );
    expect(progressLine('done.json', 300, 300, 1_000)).toBe('done.json: 100% of 300 B, 300 B/s, 0 s left');
  });

  it('without a known total (standard input) shows what was read and the rate', () => {
    expect(progressLine('<stdin>', 12_500_000, null, 5_000)).toBe('<stdin>: 12.5 MB read, 2.5 MB/s');
    expect(progressLine('<stdin>', 0, null, 0)).toBe('<stdin>: 0 B read, 0 B/s');
  });
});

describe('stepLine', () => {
  it('names the step and the time it has taken', () => {
    expect(stepLine('re-enriching findings', 4_400)).toBe('re-enriching findings: 4 s');
    expect(stepLine('deriving risks', 75_000)).toBe('deriving risks: 1 min 15 s');
  });
});

describe('progressLine with records', () => {
  it('shows the records and their rate beside the bytes', () => {
    expect(progressLine('big.ndjson', 500_000_000, 1_000_000_000, 10_000, 1_200_000)).toBe(
      'big.ndjson: 50% of 1.0 GB, 50.0 MB/s, 1,200,000 records (120,000/s), 10 s left',
    );
  });
  it('in records: the share of about the records asked for', () => {
    expect(progressLine('generate', 30_000, 120_000, 2_000, null, 'records')).toBe(
      'generate: 25% of about 120,000 records, 15,000/s, 6 s left',
    );
    expect(progressLine('generate', 130_000, 120_000, 2_000, null, 'records')).toBe(
      'generate: 100% of about 120,000 records, 65,000/s, 0 s left',
    );
  });
});

describe('startProgress', () => {
  const terminal = () => {
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    const out = { text: '' };
    stderr.on('data', (c: Buffer) => (out.text += c.toString()));
    return { io: { stdout: new PassThrough(), stderr }, out };
  };

  it('on a terminal, redraws its line every 200 ms from the counters', () => {
    vi.useFakeTimers();
    try {
      const { io, out } = terminal();
      const progress = startProgress(io);
      progress.next('scan.ndjson', 1000);
      vi.advanceTimersByTime(100);
      progress.add(400);
      progress.records(2000);
      vi.advanceTimersByTime(100);
      expect(out.text.startsWith('\r\x1b[Kscan.ndjson: 40% of 1.0 KB, ')).toBe(true);
      expect(out.text).toContain('2,000 records');
      progress.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a step (a feed load in the database) shows its name and its time, until stopped', () => {
    vi.useFakeTimers();
    try {
      const { io, out } = terminal();
      const progress = startProgress(io);
      progress.next('kev.json', 1000);
      progress.add(1000);
      progress.step('deriving risks');
      expect(out.text.endsWith('\r\x1b[Kderiving risks: 0 s')).toBe(true);
      vi.advanceTimersByTime(3000);
      expect(out.text.endsWith('\r\x1b[Kderiving risks: 3 s')).toBe(true);
      progress.stop();
      const stopped = out.text;
      progress.step('committing');
      vi.advanceTimersByTime(1000);
      expect(out.text).toBe(stopped);
    } finally {
      vi.useRealTimers();
    }
  });

  it('--quiet: nothing, on a terminal too', () => {
    vi.useFakeTimers();
    try {
      const { io, out } = terminal();
      const progress = startProgress(io, { quiet: true });
      progress.next('x', 10);
      progress.add(5);
      vi.advanceTimersByTime(1000);
      progress.stop();
      expect(out.text).toBe('');
    } finally {
      vi.useRealTimers();
    }
  });

  it('draws nothing when stderr is not a terminal', () => {
    const stderr = new PassThrough();
    let written = '';
    stderr.on('data', (c: Buffer) => (written += c.toString()));
    const progress = startProgress({ stdout: new PassThrough(), stderr });
    progress.next('x', 10);
    progress.add(5);
    progress.stop();
    expect(written).toBe('');
  });

  it('on a terminal, clears its line when stopped, once', () => {
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    let written = '';
    stderr.on('data', (c: Buffer) => (written += c.toString()));
    const progress = startProgress({ stdout: new PassThrough(), stderr });
    progress.next('x', 10);
    progress.stop();
    progress.stop();
    expect(written).toBe('\r\x1b[K');
  });

  it('draws from its counters when the work never yields to the timer (a synchronous input)', () => {
    let written = '';
    const stderr = { isTTY: true, write: (text: string) => ((written += text), true) };
    const progress = startProgress({ stdout: new PassThrough(), stderr } as never, { unit: 'records' });
    progress.next('generated', 100);
    const started = Date.now();
    while (Date.now() - started < 250) {
      // busy: no turn of the event loop, so no timer runs
    }
    progress.add(10);
    expect(written).toContain('generated: 10% of about 100 records');
    progress.stop();
  });
});
