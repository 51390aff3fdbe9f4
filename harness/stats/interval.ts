// A confidence interval around an estimate: the shape every printed CI takes.
export interface Interval {
  estimate: number;
  low: number;
  high: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
}
