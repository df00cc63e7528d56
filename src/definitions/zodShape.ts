/**
 * Checks on user-supplied zod schemas that work across copies of zod: a
 * definition file may import the user's own zod, so `instanceof` is not enough.
 */
import type { z } from 'zod';

interface ZodInternals {
  _zod?: { def?: { type?: string } };
}

function zodTypeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as ZodInternals)._zod?.def?.type;
}

export function isZodObject(value: unknown): value is z.ZodObject<z.ZodRawShape> {
  return zodTypeOf(value) === 'object';
}
