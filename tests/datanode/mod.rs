//! The assembled datanode: the container controller on the real replicas, the whole
//! replicas' life (load, delete, import) over the volumes, and the `Datanode` with its
//! threads restarting from its volume.

mod controller;
mod daemon;
mod replica_set;
mod volume;
mod with_scm;
