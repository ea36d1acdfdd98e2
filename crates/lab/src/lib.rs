//! Experiments: sweeps, repetitions, convergence, hooks and the results database.
