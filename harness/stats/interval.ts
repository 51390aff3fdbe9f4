// A confidence interval around an estimate: the shape every printed CI takes.
