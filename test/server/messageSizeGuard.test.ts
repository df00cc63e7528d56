/**
 * The stdio size guard: lines within the limit pass whole, larger ones are
 * dropped and named by their top-level id.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MessageSizeGuard } from '../../src/server/messageSizeGuard.js';

async function feed(limit: number, chunks: string[]) {
  const dropped: Array<{ id: string | number | undefined; bytes: number }> = [];
  const source = new PassThrough();
  const guard = new MessageSizeGuard(limit, (info) => dropped.push(info)).readFrom(source);
  const passed: string[] = [];
  guard.on('data', (chunk: Buffer) => passed.push(chunk.toString()));
  for (const chunk of chunks) source.write(Buffer.from(chunk));
  source.end();
  await new Promise((resolve) => guard.on('end', resolve));
  return { passed: passed.join(''), dropped };
}

describe('message size guard', () => {
  it('[RL-6] passes a line exactly at the limit, with \\n or \\r\\n', async () => {
    expect((await feed(10, ['0123456789\n'])).passed).toBe('0123456789\n');
    expect((await feed(10, ['0123456789\r\n'])).passed).toBe('0123456789\r\n');
    expect((await feed(10, ['0123456789a\n'])).dropped).toEqual([{ id: undefined, bytes: 12 }]);
  });

  it('[RL-6] names the top-level id, not an id inside params, wherever it is', async () => {
    const big = 'x'.repeat(200);
    const idLast = `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":"inner","text":"${big}"}},"id":7}\n`;
    const idFirst = `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"arguments":{"id":"inner","text":"${big}"}}}\n`;
    const { dropped, passed } = await feed(100, [idLast.slice(0, 50), idLast.slice(50), idFirst, '{"ok":true}\n']);
    expect(dropped.map((d) => d.id)).toEqual([7, 'abc']);
    expect(passed).toBe('{"ok":true}\n');
  });

  it('[RL-6] keeps lines split across chunks and multi-byte characters whole', async () => {
    const line = '{"text":"héllo wörld ✓"}\n';
    const bytes = Buffer.from(line);
    const source = new PassThrough();
    const guard = new MessageSizeGuard(100, () => {}).readFrom(source);
    const out: Buffer[] = [];
    guard.on('data', (chunk: Buffer) => out.push(chunk));
    for (let i = 0; i < bytes.length; i += 3) source.write(bytes.subarray(i, i + 3));
    source.end();
    await new Promise((resolve) => guard.on('end', resolve));
    expect(Buffer.concat(out).toString('utf8')).toBe(line);
  });
});

describe('message size guard, its source', () => {
  it('[RL-6] hands on a last line without a newline when its source ends (as the pipe did), then ends', async () => {
    const { passed, dropped } = await feed(100, ['{"a":1}\n{"b":', '2}']);
    expect(passed).toBe('{"a":1}\n{"b":2}');
    expect(dropped).toEqual([]);
  });

  it('[RL-6] is destroyed with the error of its source', async () => {
    const source = new PassThrough();
    const guard = new MessageSizeGuard(100, () => {}).readFrom(source);
    const failed = new Promise<Error>((resolve) => guard.on('error', resolve));
    source.destroy(new Error('stdin broke'));
    expect((await failed).message).toBe('stdin broke');
    expect(guard.destroyed).toBe(true);
  });

  it('[RL-6] pauses its source while nobody reads what it passed, and resumes it when read again', async () => {
    const source = new PassThrough();
    const guard = new MessageSizeGuard(1000, () => {}).readFrom(source);
    // Nobody reads the guard (a transport that closed): lines pile up to its high-water mark, then the source waits.
    const line = `${'x'.repeat(500)}\n`;
    for (let i = 0; i < 100; i++) source.write(line);
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.isPaused()).toBe(true);
    expect(guard.readableLength).toBeLessThan(100 * line.length);
    const read: string[] = [];
    guard.on('data', (chunk: Buffer) => read.push(chunk.toString()));
    await expect.poll(() => read.length).toBe(100);
    expect(source.isPaused()).toBe(false);
  });

  it('[RL-6] lets go of its source when destroyed', () => {
    const source = new PassThrough();
    const guard = new MessageSizeGuard(100, () => {}).readFrom(source);
    guard.destroy();
    expect(source.listenerCount('data')).toBe(0);
    expect(source.listenerCount('end')).toBe(0);
    expect(source.listenerCount('error')).toBe(0);
  });
});
