//! The story of a failure (`hadoop_ref::story`): what the recorder keeps, the event log
//! it writes and reads, the step table and the HTML timeline, without a checker. The timeline as a browser shows it is checked
//! by the shuttle suite (`shuttle-tests/explain.rs`).

mod event_catalogue;
mod event_log;
mod recorder;
mod timeline;
mod tla_trace;
mod upstream_logs;
mod upstream_proposed;
