//! A cluster case in the parts an explorer of its actions needs: the cluster as the case
//! sets it up (its threads not started), the driver's scripts (a fault, an operator's
//! command, a client's requests, each a step), and the judgment the case ends with (heal,
//! settle, the invariants). The same setup and judgment as the case under shuttle, whose
//! driver runs the steps at rounds its seed picks while the cluster runs on its threads;
//! here every order of the steps among the cluster's own actions is an interleaving to
//! explore.

use std::fmt;

use crate::scenarios::Violation;
use crate::sim::mini_cluster::MiniOzoneCluster;

/// What a driver step does to the cluster.
pub type StepFn = Box<dyn Fn(&MiniOzoneCluster) -> Result<(), Violation> + Send + Sync>;

/// One step of a driver's script.
pub struct DriverStep {
    /// What it does, as a counterexample names it (`transfer leadership to scm2`).
    pub name: String,
    run: StepFn,
}

impl DriverStep {
    /// A step named `name` doing `run`.
    pub fn new(
        name: impl Into<String>,
        run: impl Fn(&MiniOzoneCluster) -> Result<(), Violation> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            run: Box::new(run),
        }
    }

    /// Runs it on `cluster`.
    pub fn run(&self, cluster: &MiniOzoneCluster) -> Result<(), Violation> {
        (self.run)(cluster)
    }
}

impl fmt::Debug for DriverStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// What the case judges once the explored steps are done.
pub type JudgeFn = Box<dyn Fn(&MiniOzoneCluster) -> Result<(), Violation> + Send + Sync>;

/// A cluster case ready to explore (see the module docs).
pub struct Explorable {
    /// The cluster, set up and stepped (never started).
    pub cluster: MiniOzoneCluster,
    /// The driver's scripts: each runs its steps in order; the scripts interleave with
    /// each other and with the cluster's actions.
    pub scripts: Vec<Vec<DriverStep>>,
    judge: JudgeFn,
}

impl Explorable {
    /// `cluster` with its `scripts`, judged by `judge`.
    pub fn new(
        cluster: MiniOzoneCluster,
        scripts: Vec<Vec<DriverStep>>,
        judge: impl Fn(&MiniOzoneCluster) -> Result<(), Violation> + Send + Sync + 'static,
    ) -> Self {
        Self {
            cluster,
            scripts,
            judge: Box::new(judge),
        }
    }

    /// The case's judgment of the cluster as it is now (it heals and settles the
    /// cluster first, so it changes it).
    pub fn judge(&self) -> Result<(), Violation> {
        (self.judge)(&self.cluster)
    }
}

impl fmt::Debug for Explorable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Explorable")
            .field("scripts", &self.scripts)
            .finish_non_exhaustive()
    }
}
