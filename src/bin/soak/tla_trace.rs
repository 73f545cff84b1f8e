//! `tla-trace`: a log's datanode term-fencing steps as a trace for TLA+ trace validation
//! (`hadoop_ref::story::tla`).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use hadoop_ref::check::monitor::offline::LogSource;
use hadoop_ref::story::tla::write_term_fencing_trace;
use hadoop_ref::story::{AnyLogReader, LogFormat};

use crate::cli::TlaTraceOptions;

/// Writes the trace `options` asks for; exit 2 if the log cannot be read or the trace
/// cannot be written.
pub fn tla_trace(options: &TlaTraceOptions) -> ExitCode {
    match write(options) {
        Ok(stats) => {
            eprintln!(
                "soak tla-trace: {} step(s) of {} event(s)",
                stats.lines, stats.events
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("soak tla-trace: {}: {error}", options.file.display());
            ExitCode::from(2)
        }
    }
}

fn write(options: &TlaTraceOptions) -> Result<hadoop_ref::story::tla::TraceStats, String> {
    let format = LogFormat::from_name(&options.format)
        .ok_or_else(|| format!("unknown format {}", options.format))?;
    let mut source = LogSource::new(format, &options.file);
    if let Some(node) = &options.node {
        source = source.with_node(node);
    }
    let reader =
        AnyLogReader::open(format, &source.node, &options.file).map_err(|e| e.to_string())?;
    // The first unreadable line ends the trace: a trace with a hole is another run.
    let mut error = None;
    let events = reader.map_while(|record| match record {
        Ok(record) => Some(record.event),
        Err(e) => {
            error = Some(e.to_string());
            None
        }
    });
    let out: Box<dyn Write> = match &options.out {
        Some(path) => Box::new(File::create(path).map_err(|e| format!("{}: {e}", path.display()))?),
        None => Box::new(io::stdout().lock()),
    };
    let stats =
        write_term_fencing_trace(events, &mut BufWriter::new(out)).map_err(|e| e.to_string())?;
    match error {
        Some(error) => Err(error),
        None => Ok(stats),
    }
}
