//! The scoreboard's production-build engines (`docs/scoreboard.md`): the catalogue's caught
//! cases on real threads, and proptest's differentials of their variants; each engine's
//! log is an input of `cargo soak board` (`--threaded-log`, `--proptest-log`).
//!
//! `threaded`: each case runs, unchanged, on the operating system's threads (the build
//! without shuttle or loom, as a user's `cargo test` runs it) over several streams, each
//! stream a sequence of attempts with fresh scenario seeds until the first one that breaks
//! the case's invariants or the stream's bound of attempts or seconds. Real threads are
//! not a scheduler: a stream's figures are what the machine's own scheduling reached.
//!
//! `proptest`: for each case whose variant is a behavior of a component with a
//! differential suite (`check::conformance`: term fencing, the SCM, the standby, the
//! replica), that behavior against the fixed behavior it lacks a patch of (a legacy one
//! against the seed's patch or trunk, the seed's patch against the hardened code), from
//! several proptest seeds: cases to the first divergence, the shrunk sequence's length and
//! its diverging operation. It measures the component's sequential logic, not the
//! scenario's race: cases of other scenarios or variants have no line.
//!
//! ```text
//! cargo run --release --bin board-production -- threaded --streams 5 > threaded.log
//! cargo run --release --bin board-production -- proptest --streams 5 > proptest.log
//! ```
//!
//! Options: `--streams N` (5), `--attempts N` (1 000 000) and `--seconds S` (2) per threaded
//! stream, `--until-caught` (a case's threaded streams stop at its first catch: a check
//! that it is still caught, not a measurement), `--cases N` (256) per proptest run,
//! `--seed N` (1); any other argument is a case (`scenario/variant`) to run alone. Output lines, one per stream:
//! `threaded <case> stream <i>: caught after <n> attempt(s) in <s> s` (or `not caught in
//! <n> attempt(s), <s> s`), `proptest <case> seed <i>: diverged after <n> case(s) in <s> s,
//! shrunk to <k> operation(s), at <operation>` (or `agreed over <n> case(s) in <s> s`).

#[cfg(not(any(loom, feature = "shuttle")))]
mod production {
    use std::process::ExitCode;

    use hadoop_ref::check::catalogue::{self, Case, Expectation};
    use hadoop_ref::check::conformance::{
        DifferentialConfig, DifferentialReport, allocation, replica, standby, term_fencing,
    };
    use hadoop_ref::datanode::container::ContainerBehavior;
    use hadoop_ref::datanode::state_context::StateContextBehavior;
    use hadoop_ref::namenode::namesystem::NamesystemBehavior;
    use hadoop_ref::scenarios::rng::SeededRng;
    use hadoop_ref::scm::ScmBehavior;
    use hadoop_ref::unmodelled::Stopwatch;

    /// What to run, from the command line.
    struct Options {
        engine: String,
        streams: u64,
        attempts: u64,
        seconds: f64,
        until_caught: bool,
        cases: u32,
        seed: u64,
        only: Vec<String>,
    }

    fn parse(args: &[String]) -> Result<Options, String> {
        let mut options = Options {
            engine: args
                .first()
                .cloned()
                .ok_or("an engine: threaded or proptest")?,
            streams: 5,
            attempts: 1_000_000,
            seconds: 2.0,
            until_caught: false,
            cases: 256,
            seed: 1,
            only: Vec::new(),
        };
        let mut rest = args.iter().skip(1);
        while let Some(arg) = rest.next() {
            let mut value = || -> Result<&String, String> {
                rest.next().ok_or_else(|| format!("{arg} needs a value"))
            };
            let bad = |v: &String| format!("{arg}: not a number: {v}");
            match arg.as_str() {
                "--streams" => options.streams = value()?.parse().map_err(|_| bad(arg))?,
                "--attempts" => options.attempts = value()?.parse().map_err(|_| bad(arg))?,
                "--seconds" => options.seconds = value()?.parse().map_err(|_| bad(arg))?,
                "--until-caught" => options.until_caught = true,
                "--cases" => options.cases = value()?.parse().map_err(|_| bad(arg))?,
                "--seed" => options.seed = value()?.parse().map_err(|_| bad(arg))?,
                case => options.only.push(case.to_owned()),
            }
        }
        match options.engine.as_str() {
            "threaded" | "proptest" => Ok(options),
            other => Err(format!("unknown engine {other}: threaded or proptest")),
        }
    }

    /// Runs the engine the arguments name over the catalogue's caught cases.
    pub fn main(args: &[String]) -> ExitCode {
        let options = match parse(args) {
            Ok(options) => options,
            Err(error) => {
                eprintln!("board-production: {error}");
                return ExitCode::from(2);
            }
        };
        let cases: Vec<Case> = catalogue::all()
            .into_iter()
            .filter(|c| c.expectation == Expectation::Caught)
            .filter(|c| options.only.is_empty() || options.only.contains(&c.id()))
            .collect();
        let stopwatch = Stopwatch::start();
        for case in &cases {
            if options.engine == "threaded" {
                threaded(case, &options);
            } else {
                proptest(case, &options);
            }
        }
        eprintln!(
            "board-production: {} over {} case(s) in {:.1} s",
            options.engine,
            cases.len(),
            stopwatch.elapsed().as_secs_f64()
        );
        ExitCode::SUCCESS
    }

    /// The case's streams of attempts on real threads (a sequential case: one attempt).
    fn threaded(case: &Case, options: &Options) {
        let (streams, attempts) = if case.sequential {
            (1, 1)
        } else {
            (options.streams, options.attempts)
        };
        for stream in 0..streams {
            let mut rng = SeededRng::new(options.seed ^ stream.wrapping_mul(0x9E37_79B9));
            let stopwatch = Stopwatch::start();
            let mut caught = None;
            let mut tried = 0;
            while tried < attempts && stopwatch.elapsed().as_secs_f64() < options.seconds {
                tried += 1;
                if case.run(rng.next_u64()).is_err() {
                    caught = Some(tried);
                    break;
                }
            }
            let seconds = stopwatch.elapsed().as_secs_f64();
            match caught {
                Some(n) => {
                    println!(
                        "threaded {} stream {stream}: caught after {n} attempt(s) in {seconds:.3} s",
                        case.id()
                    );
                    if options.until_caught {
                        return;
                    }
                }
                None => println!(
                    "threaded {} stream {stream}: not caught in {tried} attempt(s), {seconds:.3} s",
                    case.id()
                ),
            }
        }
    }

    /// The differential of the case's variant against the fixed behavior it lacks a patch
    /// of, from each seed; nothing for a case without one.
    fn proptest(case: &Case, options: &Options) {
        for stream in 0..options.streams {
            let config = DifferentialConfig {
                cases: options.cases,
                seed: SeededRng::new(options.seed ^ stream.wrapping_mul(0x9E37_79B9)).next_u64(),
                ..DifferentialConfig::default()
            };
            let stopwatch = Stopwatch::start();
            let Some(report) = differential(case, &config) else {
                return;
            };
            let seconds = stopwatch.elapsed().as_secs_f64();
            match &report.divergence {
                Some(d) => println!(
                    "proptest {} seed {stream}: diverged after {} case(s) in {seconds:.3} s, \
                     shrunk to {} operation(s), at {}",
                    case.id(),
                    d.found_after_cases,
                    d.length,
                    d.story.events.last().map_or("?", |e| e.name.as_str())
                ),
                None => println!(
                    "proptest {} seed {stream}: agreed over {} case(s) in {seconds:.3} s",
                    case.id(),
                    report.cases
                ),
            }
        }
    }

    /// The component of the case's scenario, when it has a differential, run with the
    /// case's variant against its reference.
    fn differential(case: &Case, config: &DifferentialConfig) -> Option<DifferentialReport> {
        let of = |list: Vec<Case>| list.iter().any(|c| c.scenario == case.scenario);
        let variant = case.variant;
        if of(catalogue::term_fencing()) {
            let behavior = StateContextBehavior::from_name(variant)?;
            let reference = match behavior {
                StateContextBehavior::Hardened => return None,
                StateContextBehavior::SeedPatch => StateContextBehavior::Hardened,
                _ => StateContextBehavior::SeedPatch,
            };
            return Some(term_fencing::differential(behavior, reference, config));
        }
        if of(catalogue::allocation()) {
            let behavior = ScmBehavior::ALL.into_iter().find(|b| b.name() == variant)?;
            let reference = match behavior {
                ScmBehavior::Hardened => return None,
                ScmBehavior::SeedPatch => ScmBehavior::Hardened,
                _ => ScmBehavior::SeedPatch,
            };
            return Some(allocation::differential(behavior, reference, config));
        }
        if of(catalogue::standby()) {
            let behavior = NamesystemBehavior::ALL
                .into_iter()
                .find(|b| b.name() == variant && *b != NamesystemBehavior::Trunk)?;
            return Some(standby::differential(
                behavior,
                NamesystemBehavior::Trunk,
                config,
            ));
        }
        if of(catalogue::container()) {
            let behavior = ContainerBehavior::ALL
                .into_iter()
                .find(|b| b.name() == variant)?;
            let reference = match behavior {
                ContainerBehavior::Hardened => return None,
                ContainerBehavior::SeedPatch => ContainerBehavior::Hardened,
                ContainerBehavior::Legacy => ContainerBehavior::SeedPatch,
            };
            return Some(replica::differential(behavior, reference, config));
        }
        None
    }
}

#[cfg(not(any(loom, feature = "shuttle")))]
fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    production::main(&args)
}

/// The engines run the production build's threads and differentials: a shuttle or loom
/// build has neither.
#[cfg(any(loom, feature = "shuttle"))]
fn main() -> std::process::ExitCode {
    eprintln!("board-production: build it without --features shuttle and the loom cfg");
    std::process::ExitCode::from(2)
}
