import { describe, expect, it } from 'vitest';
import { jsonCopy } from '../../src/store/internal.js';

/** What a store that writes JSON and reads it back would hold. */
const throughJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

class ListWithJson extends Array<number> {
  toJSON(): string {
    return 'list';
  }
}

const cases: Record<string, unknown> = {
  'plain message': { role: 'user', content: [{ type: 'text', text: 'hi' }], meta: { n: 1, ok: true, none: null } },
  'members that JSON leaves out': { a: undefined, f: () => 1, s: Symbol('s'), kept: 'yes' },
  'a Date': { at: new Date(0) },
  'an object with toJSON': { v: { toJSON: () => 'replaced' } },
  'undefined and functions in arrays': [1, undefined, () => 2, 'x'],
  'a sparse array': [1, , 3], // eslint-disable-line no-sparse-arrays
  'non-finite numbers': { a: NaN, b: Infinity, c: -Infinity, d: [NaN] },
  'negative zero': { z: -0 },
  'a class instance': { p: new Point(1, 2) },
  'a Map and a Set': { m: new Map([[1, 2]]), s: new Set([1]) },
  'a null-prototype object': Object.assign(Object.create(null) as object, { a: 1 }),
  'integer-like keys': { b: 1, 2: 'two', a: 2, 1: 'one' },
  'a __proto__ key': JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown,
  'deep nesting': JSON.parse(`${'['.repeat(200)}1${']'.repeat(200)}`) as unknown,
  'an array with its own toJSON': { list: Object.assign([1, 2], { toJSON: () => 'replaced' }) },
  'an array subclass with toJSON': { list: ListWithJson.from([1, 2]) },
};

describe('jsonCopy', () => {
  for (const [name, value] of Object.entries(cases)) {
    it(`copies ${name} as a JSON round trip would`, () => {
      const copy = jsonCopy(value, 'value');
      expect(copy).toStrictEqual(throughJson(value));
      expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
      expect(Object.keys(copy as object)).toEqual(Object.keys(throughJson(value) as object));
    });
  }

  it('makes a copy that shares nothing with what it was given', () => {
    const value = { list: [{ a: 1 }], nested: { b: { c: 'd' } } };
    const copy = jsonCopy(value, 'value');
    copy.list[0]!.a = 2;
    copy.nested.b.c = 'e';
    expect(value).toEqual({ list: [{ a: 1 }], nested: { b: { c: 'd' } } });
  });

  it('keeps a __proto__ member as data, never as the prototype', () => {
    const copy = jsonCopy(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>, 'value');
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reports a getter that throws as what cannot be stored', () => {
    const value = {
      get broken(): never {
        throw new Error('no');
      },
    };
    expect(() => jsonCopy(value, 'thread meta')).toThrow(/thread meta cannot be stored/);
  });

  it('refuses what JSON cannot hold, naming it', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => jsonCopy(cycle, 'message 3')).toThrow(/message 3 cannot be stored/);
    expect(() => jsonCopy({ n: 1n }, 'thread meta')).toThrow(/thread meta cannot be stored/);
    expect(() => jsonCopy(undefined, 'value')).toThrow(/value cannot be stored/);
  });
});
