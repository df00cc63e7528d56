/** Which keys of an argument object its zod schema does not declare (unknownKeys.ts). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { undeclaredKeys, unknownKeys } from '../../src/definitions/unknownKeys.js';

describe('unknownKeys', () => {
  it('finds keys a plain object does not declare, at any depth, by path', () => {
    const schema = z.object({
      a: z.string(),
      b: z.object({ c: z.number() }).nullable().optional(),
      list: z.array(z.object({ d: z.string() })),
    });
    expect(unknownKeys(schema, { a: 'x', list: [] })).toEqual([]);
    expect(unknownKeys(schema, { a: 'x', z: 1, b: { c: 1, y: 2 }, list: [{ d: 'd' }, { d: 'd', e: 1 }] })).toEqual([
      'z',
      'b.y',
      'list[1].e',
    ]);
    expect(unknownKeys(schema, { a: 'x', b: null, list: [], gone: undefined })).toEqual([]);
  });

  it('checks an object of scalar fields by its keys alone, as often as it is asked', () => {
    const flat = z.object({ message: z.string(), count: z.number().int().optional(), mode: z.enum(['a', 'b']).default('a') });
    for (let i = 0; i < 3; i++) {
      expect(unknownKeys(flat, { message: 'x', extra: 1, gone: undefined })).toEqual(['extra']);
      expect(unknownKeys(flat, { message: 'x', count: 2, mode: 'b' })).toEqual([]);
    }
    // Not an object: nothing to check (zod reports the type).
    expect(unknownKeys(flat, 'text')).toEqual([]);
  });

  it('lets open objects and records hold any key', () => {
    expect(unknownKeys(z.looseObject({ a: z.string() }), { a: 'x', b: 1 })).toEqual([]);
    expect(unknownKeys(z.object({ a: z.string() }).catchall(z.number()), { a: 'x', b: 1 })).toEqual([]);
    expect(unknownKeys(z.record(z.string(), z.object({ n: z.number() })), { any: { n: 1, m: 2 } })).toEqual(['any.m']);
  });

  it('reads through defaults, pipes, lazy schemas, unions and intersections', () => {
    const node: z.ZodType = z.lazy(() => z.object({ name: z.string(), children: z.array(node).optional() }));
    expect(unknownKeys(node, { name: 'a', children: [{ name: 'b', x: 1 }] })).toEqual(['children[0].x']);
    const piped = z
      .object({ n: z.string() })
      .default({ n: '1' })
      .pipe(z.object({ n: z.string() }));
    expect(unknownKeys(piped, { n: '1', m: 2 })).toEqual(['m']);
    const union = z.union([z.object({ url: z.string() }), z.object({ path: z.string() }), z.string()]);
    expect(unknownKeys(union, { url: 'u' })).toEqual([]);
    expect(unknownKeys(union, { url: 'u', port: 1 })).toEqual(['port']);
    expect(unknownKeys(union, 'text')).toEqual([]);
    const both = z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() }));
    expect(unknownKeys(both, { a: '1', b: '2', c: '3' })).toEqual(['c']);
    // A union with an open option says nothing about keys.
    expect(unknownKeys(z.union([z.object({ a: z.string() }), z.record(z.string(), z.string())]), { zz: 'x' })).toEqual([]);
  });

  it('checks what lies inside strict objects, which hold no more keys than plain ones', () => {
    const strict = z.strictObject({ a: z.string(), inner: z.object({ b: z.number() }) });
    expect(unknownKeys(strict, { a: 'x', inner: { b: 1, c: 2 } })).toEqual(['inner.c']);
    expect(unknownKeys(z.object({ a: z.string() }).strict(), { a: 'x', extra: 1 })).toEqual(['extra']);
  });

  it('checks a union against the option zod keeps, so keys several options declare are still descended', () => {
    const shape = z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('circle'), at: z.object({ x: z.number(), y: z.number() }), radius: z.number() }),
      z.object({ kind: z.literal('square'), at: z.object({ x: z.number(), y: z.number() }), side: z.number() }),
    ]);
    expect(unknownKeys(shape, { kind: 'square', at: { x: 1, y: 2 }, side: 3 })).toEqual([]);
    expect(unknownKeys(shape, { kind: 'square', at: { x: 1, y: 2, z: 3 }, side: 3 })).toEqual(['at.z']);
    // A key of the other option would be dropped by the one zod keeps.
    expect(unknownKeys(shape, { kind: 'square', at: { x: 1, y: 2 }, side: 3, radius: 4 })).toEqual(['radius']);
    // When no option accepts the value (zod refuses it anyway) a key any option declares is known.
    expect(unknownKeys(shape, { kind: 'oval', at: { x: 1, y: 2, w: 0 }, radius: 1 })).toEqual(['at.w']);
  });

  it("picks a discriminated union's option by its discriminator, without running the option's transforms again", () => {
    let transformed = 0;
    const count = <T>(value: T): T => {
      transformed += 1;
      return value;
    };
    const leaf = z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('text'), text: z.string().transform(count) }),
      z.object({ kind: z.literal('list'), items: z.array(z.string()) }),
    ]);
    const outer = z.discriminatedUnion('type', [
      z.object({ type: z.literal('one'), part: leaf }),
      z.object({ type: z.literal('many'), parts: z.array(leaf) }),
    ]);
    const value = {
      type: 'many',
      parts: [
        { kind: 'text', text: 'a', extra: 1 },
        { kind: 'list', items: [] },
      ],
    };
    expect(unknownKeys(outer, value)).toEqual(['parts[0].extra']);
    expect(transformed).toBe(0);
    // The option its discriminator names is the one zod validates, even when the rest of the value fails it.
    expect(unknownKeys(outer, { type: 'one', part: { kind: 'list', items: 'x', text: 'b' } })).toEqual(['part.text']);
  });

  it('finds the option a discriminated union takes as zod does: through nested unions, pipes and .catch', () => {
    const inner = z.discriminatedUnion('sub', [
      z.object({ type: z.literal('x'), sub: z.literal('p'), p: z.string() }),
      z.object({ type: z.literal('x'), sub: z.literal('q'), q: z.string() }),
    ]);
    const outer = z.discriminatedUnion('type', [inner, z.object({ type: z.literal('y'), y: z.string() })]);
    const value = { type: 'x', sub: 'p', p: 'a', extra: 1 };
    expect(outer.safeParse(value).success).toBe(true);
    expect(unknownKeys(outer, value)).toEqual(['extra']);
    expect(unknownKeys(outer, { type: 'x', sub: 'q', q: 'b', p: 'a' })).toEqual(['p']);
    // zod picks by the values each option lists, not by parsing the field: `.catch` does not make an option take all.
    const caught = z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('a').catch('a'), a: z.string() }),
      z.object({ kind: z.literal('b'), b: z.string() }),
    ]);
    expect(caught.safeParse({ kind: 'b', b: 'x' }).success).toBe(true);
    expect(unknownKeys(caught, { kind: 'b', b: 'x' })).toEqual([]);
    expect(unknownKeys(caught, { kind: 'b', b: 'x', a: 'y' })).toEqual(['a']);
  });

  it('descends keys both sides of an intersection declare, and tuples item by item', () => {
    const both = z.intersection(z.object({ p: z.object({ a: z.string() }) }), z.object({ p: z.object({ b: z.string() }) }));
    expect(unknownKeys(both, { p: { a: '1', b: '2' } })).toEqual([]);
    expect(unknownKeys(both, { p: { a: '1', b: '2', c: '3' } })).toEqual(['p.c']);
    const pair = z.tuple([z.object({ a: z.string() }), z.string()], z.object({ r: z.number() }));
    expect(unknownKeys(pair, [{ a: 'x', b: 1 }, 's', { r: 1 }, { r: 2, q: 3 }])).toEqual(['[0].b', '[3].q']);
  });
});

describe('undeclaredKeys', () => {
  it('lists keys outside the declared names, leaving undefined ones out', () => {
    expect(undeclaredKeys({ query: 'x', limit: 3, gone: undefined }, ['query'])).toEqual(['limit']);
    expect(undeclaredKeys(undefined, ['query'])).toEqual([]);
  });
});
