// Parameter values and configs: the vocabulary every layer shares.
import { z } from 'zod';

export const paramValueSchema = z.union([z.number(), z.string(), z.boolean()]);
/** One value of a tuned or fixed parameter, as written in an experiment file. */
export type ParamValue = z.infer<typeof paramValueSchema>;

export const configSchema = z.record(z.string(), paramValueSchema);
/** A trial's parameters by name. */
export type Config = z.infer<typeof configSchema>;
