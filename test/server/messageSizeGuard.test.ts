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
  it('[RL-6] passes a last line without a newline when its source ends, then ends', async () => {
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
});
