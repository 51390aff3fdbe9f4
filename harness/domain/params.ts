// Parameter values and configs: the vocabulary every layer shares.

/** One value of a tuned or fixed parameter, as written in an experiment file. */
export type ParamValue = string | number | boolean;

/** A trial's parameters by name. */
export type Config = Record<string, ParamValue>;
