//! `docs/upstream-logging.md` held to its word: the log statements it proposes upstream
//! add are the ones the parsers read (`PROPOSED`), a cluster's logs written with them
//! decide every monitor of HDDS-17268, HDDS-16811 and HDFS-2742, and the same logs
//! without them leave undecided exactly the monitors the page says need them.
//!
//! The logs are a correct run, so every decided verdict is ok: two SCMs (a leader change),
//! a datanode that closes a container, deletes a block, repairs another from a peer,
//! restarts and deletes an empty container, its container log, and a NameNode that is
//! standby, then active. Each proposed line has the line today's upstream writes in its
//! place, if any (the replication manager's pass line without its counts, a reconcile
//! command without its term).

use std::collections::BTreeMap;
use std::path::PathBuf;

use hadoop_ref::check::monitor::offline::{LogSource, check_run};
use hadoop_ref::check::monitor::{Judgement, MonitorSet, Verdict};
use hadoop_ref::story::LogFormat;
use hadoop_ref::story::upstream::{
    Statement, UpstreamFormat, hdfs_namenode, ozone_datanode, ozone_scm,
};

const DATANODE: LogFormat = LogFormat::Upstream(UpstreamFormat::OzoneDatanode);
const SCM: LogFormat = LogFormat::Upstream(UpstreamFormat::OzoneScm);
const NAMENODE: LogFormat = LogFormat::Upstream(UpstreamFormat::HdfsNamenode);

/// The seeds whose monitors the page promises to decide.
const SEEDS: [&str; 3] = ["HDDS-17268", "HDDS-16811", "HDFS-2742"];

/// One line of a log: today's upstream line, or a proposed one (with what today's
/// upstream writes in its place, if anything).
enum L {
    Today(String),
    Proposed(String, Option<String>),
}

/// An Ozone line (`%d{ISO8601} [%t] %p %c: %m`) at second `s` past 10:00.
fn oz(s: u32, thread: &str, level: &str, logger: &str, message: &str) -> String {
    format!("2025-03-01 10:00:{s:02},000 [{thread}] {level} {logger}: {message}\n")
}

/// A Hadoop line (`%d{ISO8601} %p %c: %m`) at second `s` past 10:00.
fn hd(s: u32, level: &str, logger: &str, message: &str) -> String {
    format!("2025-03-01 10:00:{s:02},000 {level} {logger}: {message}\n")
}

/// A container log line (`%d{DEFAULT} | %-5level | %msg | %throwable{3}`).
fn container(s: u32, message: &str) -> String {
    format!("2025-03-01 10:00:{s:02},500 | INFO  | {message} | \n")
}

fn today(line: String) -> L {
    L::Today(line)
}

fn proposed(line: String) -> L {
    L::Proposed(line, None)
}

/// The log's text, with the proposed lines or with what today's upstream writes instead.
fn text(lines: &[L], with_proposed: bool) -> String {
    lines
        .iter()
        .filter_map(|line| match line {
            L::Today(line) => Some(line.clone()),
            L::Proposed(line, _) if with_proposed => Some(line.clone()),
            L::Proposed(_, instead) => instead.clone(),
        })
        .collect()
}

const CONTEXT: &str = "ha.SCMContext";
const STARTER: &str = "server.StorageContainerManagerStarter";

fn scm1() -> Vec<L> {
    vec![
        today(oz(0, "main", "INFO", STARTER, "STARTUP_MSG: ")),
        today(oz(
            1,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <false,0> to <true,1>",
        )),
        today(oz(
            1,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeaderReady> from <false> to <true>",
        )),
        today(oz(
            2,
            "rpc",
            "TRACE",
            "container.ContainerManagerImpl",
            "New container allocated: ContainerInfo{id=#1, state=OPEN, stateEnterTime=0, pipelineID=PipelineID=p1, owner=om1}",
        )),
        proposed(oz(
            2,
            "rpc",
            "DEBUG",
            "container.ContainerManagerImpl",
            "Allocated container #1 on pipeline PipelineID=p1 with datanodes [u1(dn1/10.0.0.1), u2(dn2/10.0.0.2)].",
        )),
        proposed(oz(
            3,
            "sm",
            "DEBUG",
            "container.ContainerStateManagerImpl",
            "Container #1 state changed from OPEN to CLOSING.",
        )),
        proposed(oz(
            4,
            "icr",
            "DEBUG",
            "container.IncrementalContainerReportHandler",
            "Processed container report from datanode u1(dn1/10.0.0.1) with containers [#1].",
        )),
        proposed(oz(
            4,
            "sm",
            "DEBUG",
            "container.ContainerStateManagerImpl",
            "Container #1 state changed from CLOSING to CLOSED.",
        )),
        today(oz(
            20,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <true,1> to <false,1>",
        )),
    ]
}

fn scm2() -> Vec<L> {
    let pass = |s, under| {
        let message = format!(
            "Replication Monitor Thread took 3 milliseconds for processing 1 containers: {under} under replicated, 0 over replicated, 0 pending replica operations."
        );
        L::Proposed(
            oz(s, "rm", "INFO", "replication.ReplicationManager", &message),
            Some(oz(
                s,
                "rm",
                "INFO",
                "replication.ReplicationManager",
                "Replication Monitor Thread took 3 milliseconds for processing 1 containers.",
            )),
        )
    };
    vec![
        today(oz(0, "main", "INFO", STARTER, "STARTUP_MSG: ")),
        today(oz(
            20,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <false,0> to <true,2>",
        )),
        today(oz(
            20,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeaderReady> from <false> to <true>",
        )),
        pass(22, 1),
        proposed(oz(
            40,
            "fcr",
            "DEBUG",
            "container.ContainerReportHandler",
            "Processed container report from datanode u1(dn1/10.0.0.1) with containers [#1].",
        )),
        proposed(oz(
            40,
            "fcr",
            "DEBUG",
            "container.ContainerReportHandler",
            "Processed container report from datanode u2(dn2/10.0.0.2) with containers [#1].",
        )),
        pass(41, 0),
    ]
}

const STATE: &str = "statemachine.StateContext";
const HANDLER: &str = "keyvalue.KeyValueHandler";
const PEER: &str = "u2(dn2/10.0.0.2)";
const CLOSE: &str = "closeContainerCommand: cmdID: 11, encodedToken: \"\", term: 1, deadlineMsSinceEpoch: 0, containerID: 1, pipelineID: PipelineID=p1, force: false";
const DELETE_BLOCKS: &str = "deleteBlocksCommand: cmdID: 12, encodedToken: \"\", term: 1, deadlineMsSinceEpoch: 0, deletedBlocksTransaction: [{ txnID: 1, containerID: 1, deleteBlockCount: 1, count: 0 }]";
const DELETE_CONTAINER: &str = "deleteContainerCommand: cmdID: 21, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, containerID: 9, replicaIndex: 0, force: false";

/// A command queued, handed out (the term initialised first, after a start) and run by
/// its handler's thread: all proposed lines.
fn command(s: u32, command: &str, term: u32, init: bool, handler: &str, level: &str) -> Vec<L> {
    let processor = "Command processor thread";
    let mut lines = vec![proposed(oz(
        s,
        "EndpointStateMachine task thread for scm - 0",
        "DEBUG",
        STATE,
        &format!("Added command {command} to the command queue."),
    ))];
    if init {
        lines.push(proposed(oz(
            s,
            processor,
            "INFO",
            STATE,
            &format!("Initialized termOfLeaderSCM to {term}."),
        )));
    }
    lines.extend([
        proposed(oz(
            s,
            processor,
            "DEBUG",
            STATE,
            &format!("Handing out command {command}, termOfLeaderSCM {term}."),
        )),
        proposed(oz(
            s + 1,
            "handler",
            level,
            &format!("commandhandler.{handler}"),
            &format!("Processed command {command}, outcome done."),
        )),
    ]);
    lines
}

fn dn1() -> Vec<L> {
    let heartbeat = "EndpointStateMachine task thread for scm - 0";
    let deleting = "BlockDeletingService#0";
    let supervisor = "ContainerReplicationThread-0";
    // Today's reconcile command has no term in its text (T1 proposes it).
    let reconcile = "reconcileContainerCommand: containerId=1, peerNodes=[u2(dn2/10.0.0.2)]";
    let reconcile_with_term = format!("{reconcile}, term: 2");
    let mut lines = vec![
        today(oz(
            1,
            "main",
            "INFO",
            "ozone.HddsDatanodeService",
            "STARTUP_MSG: ",
        )),
        proposed(oz(
            2,
            heartbeat,
            "DEBUG",
            STATE,
            "Heartbeat term 1 arrived before termOfLeaderSCM was initialized, kept for init.",
        )),
    ];
    lines.extend(command(
        3,
        CLOSE,
        1,
        true,
        "CloseContainerCommandHandler",
        "INFO",
    ));
    lines.extend(command(
        5,
        DELETE_BLOCKS,
        1,
        false,
        "DeleteBlocksCommandHandler",
        "DEBUG",
    ));
    lines.extend([
        today(oz(7, deleting, "DEBUG", "background.BlockDeletingTask", "KeyValueContainerData #1 (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b]), delBlocks: 1")),
        today(oz(7, deleting, "DEBUG", "background.BlockDeletingTask", "Deleting block 7")),
        today(oz(7, deleting, "DEBUG", "checksum.ContainerChecksumTreeManager", "Merkle tree for container 1 updated with container data checksum 1a2b")),
        today(oz(7, deleting, "WARN", HANDLER, "Container 1 data checksum updated from 9f9f to 1a2b")),
        proposed(oz(21, heartbeat, "INFO", STATE, "Updated termOfLeaderSCM from 1 to 2.")),
        proposed(oz(25, heartbeat, "DEBUG", STATE, &format!("Added command {reconcile_with_term} to the command queue."))),
        proposed(oz(25, "Command processor thread", "DEBUG", STATE, &format!("Handing out command {reconcile_with_term}, termOfLeaderSCM 2."))),
        today(oz(26, supervisor, "INFO", HANDLER, &format!("Beginning reconciliation for container 1 with peer {PEER}. Current data checksum is 1a2b"))),
        today(oz(26, supervisor, "DEBUG", HANDLER, &format!("Successfully ingested chunk at offset 0 into block 8 of container 1 from peer {PEER}"))),
        today(oz(26, supervisor, "DEBUG", HANDLER, &format!("Reconciled all 1 chunks in block 8 in container 1 from peer {PEER}"))),
        today(oz(27, supervisor, "DEBUG", "checksum.ContainerChecksumTreeManager", "Merkle tree for container 1 updated with container data checksum 3c4d")),
        today(oz(27, supervisor, "WARN", HANDLER, "Container 1 data checksum updated from 1a2b to 3c4d")),
        today(oz(27, supervisor, "WARN", HANDLER, "Completed reconciliation for container 1 with 1/1 peers. 1 blocks were updated. Data checksum updated from 1a2b to 3c4d")),
        today(oz(28, "OnDemandContainerScanner", "DEBUG", "ozoneimpl.OnDemandContainerScanner", "Completed scan of container 1 at 2025-03-01T10:00:28Z")),
        L::Proposed(
            oz(27, supervisor, "INFO", "replication.ReplicationSupervisor", &format!("Successful DONE {reconcile_with_term}")),
            Some(oz(27, supervisor, "INFO", "replication.ReplicationSupervisor", &format!("Successful DONE {reconcile}"))),
        ),
        today(oz(30, "main", "INFO", "ozone.HddsDatanodeService", "STARTUP_MSG: ")),
        proposed(oz(31, heartbeat, "DEBUG", STATE, "Heartbeat term 2 arrived before termOfLeaderSCM was initialized, kept for init.")),
    ]);
    lines.extend(command(
        32,
        DELETE_CONTAINER,
        2,
        true,
        "DeleteContainerCommandHandler",
        "INFO",
    ));
    lines
}

/// The datanode's container log.
fn dn1_containers() -> Vec<L> {
    vec![
        today(container(
            2,
            "ID=1 | Index=0 | BCSID=0 | State=OPEN | Volume=/data/hdds | DataChecksum=0",
        )),
        today(container(
            2,
            "ID=9 | Index=0 | BCSID=0 | State=OPEN | Volume=/data/hdds | DataChecksum=0",
        )),
        today(container(
            4,
            "ID=1 | Index=0 | BCSID=5 | State=CLOSED | Volume=/data/hdds | DataChecksum=0",
        )),
        today(container(
            33,
            "ID=9 | Index=0 | BCSID=0 | State=DELETED | Empty container deleted",
        )),
    ]
}

const DN: &str = "127.0.0.1:9866";
const MANAGER: &str = "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager";
const NAMESYSTEM: &str = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem";
const LOADER: &str = "org.apache.hadoop.hdfs.server.namenode.FSEditLogLoader";
const EDIT_LOG: &str = "org.apache.hadoop.hdfs.server.namenode.FSEditLog";
const STATE_CHANGE: &str = "BlockStateChange";

/// A report of block `id` at genstamp `gs`, logged twice as upstream does.
fn reported(s: u32, id: u32, gs: u32, state: &str) -> L {
    let line = hd(
        s,
        "DEBUG",
        MANAGER,
        &format!("Reported block blk_{id}_{gs} on {DN} size 1024 replicaState = {state}"),
    );
    today(format!("{line}{line}"))
}

fn stored(s: u32, id: u32, gs: u32) -> L {
    today(hd(
        s,
        "DEBUG",
        STATE_CHANGE,
        &format!(
            "BLOCK* addStoredBlock: blockMap updated: {DN} is added to blk_{id}_{gs} size 1024"
        ),
    ))
}

fn close_op(path: &str, id: u32, gs: u32, txid: u32) -> String {
    format!(
        "CloseOp [length=0, inodeId=16386, path={path}, replication=1, mtime=1, atime=1, blockSize=134217728, blocks=[blk_{id}_{gs}], permissions=hdfs:supergroup:rw-r--r--, aclEntries=null, clientName=, clientMachine=, overwrite=false, storagePolicyId=0, erasureCodingPolicyId=0, opCode=OP_CLOSE, txid={txid}]"
    )
}

fn add_block(path: &str, id: u32, gs: u32) -> String {
    format!(
        "AddBlockOp [path={path}, penultimateBlock=NULL, lastBlock=blk_{id}_{gs}, RpcClientId=, RpcCallId=-2]"
    )
}

/// A NameNode standby (in safe mode, replaying a file's block and completion, judging
/// its reports and a queued RBW one), then active, where a client writes another file.
fn nn2() -> Vec<L> {
    vec![
        today(hd(
            0,
            "INFO",
            "org.apache.hadoop.hdfs.server.namenode.NameNode",
            "STARTUP_MSG: ",
        )),
        today(hd(
            1,
            "INFO",
            NAMESYSTEM,
            "Starting services required for standby state",
        )),
        today(hd(
            2,
            "TRACE",
            LOADER,
            &format!("replaying edit log: {}", add_block("/f", 1073741825, 1001)),
        )),
        reported(3, 1073741825, 1001, "RBW"),
        today(hd(
            3,
            "DEBUG",
            MANAGER,
            &format!(
                "Queueing reported block blk_1073741825_1001 in state RBW from datanode {DN} for later processing because the block is under construction."
            ),
        )),
        today(hd(
            4,
            "TRACE",
            LOADER,
            &format!(
                "replaying edit log: {}",
                close_op("/f", 1073741825, 1001, 5)
            ),
        )),
        reported(5, 1073741825, 1001, "FINALIZED"),
        stored(5, 1073741825, 1001),
        proposed(hd(
            6,
            "DEBUG",
            "org.apache.hadoop.hdfs.server.blockmanagement.BlockManagerSafeMode",
            "Safe mode consistency check: blockTotal=1, blockSafe=1, recounted total=1, recounted safe=1, blocks with corrupt replicas=0.",
        )),
        today(hd(
            8,
            "DEBUG",
            MANAGER,
            &format!(
                "Processing previouly queued message ReportedBlockInfo [block=blk_1073741825_1001, dn={DN}, reportedState=RBW]"
            ),
        )),
        reported(8, 1073741825, 1001, "RBW"),
        today(hd(
            8,
            "INFO",
            MANAGER,
            &format!(
                "Received an RBW replica for blk_1073741825_1001 on {DN}: ignoring it, since it is complete with the same genstamp"
            ),
        )),
        today(hd(
            10,
            "INFO",
            NAMESYSTEM,
            "Starting services required for active state",
        )),
        today(hd(
            10,
            "INFO",
            "org.apache.hadoop.hdfs.server.blockmanagement.DatanodeManager",
            "Marking all datanodes as stale",
        )),
        today(hd(
            10,
            "INFO",
            MANAGER,
            "Processing 0 messages from DataNodes that were previously queued during standby state",
        )),
        today(hd(
            10,
            "INFO",
            NAMESYSTEM,
            "Reprocessing replication and invalidation queues",
        )),
        proposed(hd(
            12,
            "TRACE",
            EDIT_LOG,
            &format!("logging edit: {}", add_block("/g", 1073741826, 1002)),
        )),
        reported(13, 1073741826, 1002, "FINALIZED"),
        stored(13, 1073741826, 1002),
        proposed(hd(
            14,
            "TRACE",
            EDIT_LOG,
            &format!("logging edit: {}", close_op("/g", 1073741826, 1002, 9)),
        )),
    ]
}

/// Writes the logs and judges them as one run.
fn judge(logs: &[(LogFormat, &str, String)]) -> Vec<Judgement> {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let sources: Vec<LogSource> = logs
        .iter()
        .map(|(format, name, text)| {
            let path: PathBuf = dir.path().join(name);
            std::fs::write(&path, text).expect("a written log");
            LogSource::new(*format, &path)
        })
        .collect();
    check_run(&sources).expect("readable logs").judgements
}

/// Every monitor of the three seeds, with its verdict over the cluster's logs: the Ozone
/// seeds' from the SCMs' and the datanode's logs merged, HDFS-2742's from the NameNode's.
fn verdicts(with_proposed: bool) -> BTreeMap<&'static str, Verdict> {
    let ozone = judge(&[
        (
            SCM,
            "ozone-hadoop-scm-scm1.log",
            text(&scm1(), with_proposed),
        ),
        (
            SCM,
            "ozone-hadoop-scm-scm2.log",
            text(&scm2(), with_proposed),
        ),
        (
            DATANODE,
            "ozone-hadoop-datanode-dn1.log",
            text(&dn1(), with_proposed),
        ),
        (
            DATANODE,
            "dn-container-dn1.log",
            text(&dn1_containers(), with_proposed),
        ),
    ]);
    let hdfs = judge(&[(
        NAMENODE,
        "hadoop-hdfs-namenode-nn2.log",
        text(&nn2(), with_proposed),
    )]);
    let mut verdicts = BTreeMap::new();
    for judgement in ozone.into_iter().filter(|j| j.seed.starts_with("HDDS")) {
        verdicts.insert(judgement.property, judgement.verdict);
    }
    for judgement in hdfs.into_iter().filter(|j| j.seed.starts_with("HDFS")) {
        verdicts.insert(judgement.property, judgement.verdict);
    }
    verdicts
}

/// The monitors of the three seeds (a seed key that names one of them).
fn in_scope() -> Vec<&'static str> {
    let mut set = MonitorSet::all();
    set.finish()
        .into_iter()
        .filter(|j| SEEDS.iter().any(|seed| j.seed.contains(seed)))
        .map(|j| j.property)
        .collect()
}

fn page() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/upstream-logging.md"
    ))
    .expect("docs/upstream-logging.md exists")
}

/// The rows of the page's table between `<!-- NAME: begin -->` and its end, as cells.
fn table(name: &str) -> Vec<Vec<String>> {
    let page = page();
    let begin = page
        .find(&format!("<!-- {name}: begin -->"))
        .unwrap_or_else(|| panic!("the {name} table's start"));
    let end = page
        .find(&format!("<!-- {name}: end -->"))
        .unwrap_or_else(|| panic!("the {name} table's end"));
    page[begin..end]
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The page's monitors, each with whether it needs the proposed statements.
fn needs_proposals() -> BTreeMap<String, bool> {
    table("monitors")
        .into_iter()
        .map(|cells| (cells[1].clone(), cells[4].starts_with("yes")))
        .collect()
}

#[test]
fn the_page_lists_every_monitor() {
    let mut set = MonitorSet::all();
    let monitors: Vec<&str> = set.finish().into_iter().map(|j| j.property).collect();
    let listed = needs_proposals();
    for monitor in &monitors {
        assert!(
            listed.contains_key(*monitor),
            "docs/upstream-logging.md lists `{monitor}`"
        );
    }
    assert_eq!(listed.len(), monitors.len(), "{listed:?}");
}

#[test]
fn a_log_with_the_proposed_statements_decides_every_monitor_of_the_three_seeds() {
    let verdicts = verdicts(true);
    let scope = in_scope();
    assert_eq!(scope.len(), 15, "{scope:?}");
    for monitor in scope {
        let verdict = &verdicts[monitor];
        // A correct run: decided means ok here.
        assert!(
            matches!(verdict, Verdict::Ok { .. }),
            "{monitor}: {verdict:?}"
        );
    }
    // Every command the datanode ran after a start was judged against the leaders' terms:
    // the close, delete-blocks and delete-container runs (proposed lines) and the
    // reconciliation (today's line, with the term T1 adds).
    assert_eq!(
        verdicts["no command of a leader deposed before the restart"],
        Verdict::Ok { judged: 4 }
    );
    assert_eq!(
        verdicts["no command below a term already taken"],
        Verdict::Ok { judged: 4 }
    );
}

#[test]
fn without_them_the_monitors_that_need_them_are_undecided() {
    let verdicts = verdicts(false);
    let needs = needs_proposals();
    for monitor in in_scope() {
        let verdict = &verdicts[monitor];
        if needs[monitor] {
            assert!(
                matches!(verdict, Verdict::Undecided { .. }),
                "{monitor}: {verdict:?}"
            );
        } else {
            assert!(
                matches!(verdict, Verdict::Ok { .. }),
                "{monitor}: {verdict:?}"
            );
        }
    }
}

#[test]
fn a_proposed_line_decides_a_violation_too() {
    // The datanode hands out the deposed leader's term-1 command after it took term 2.
    let stale = "closeContainerCommand: cmdID: 13, encodedToken: \"\", term: 1, deadlineMsSinceEpoch: 0, containerID: 1, pipelineID: PipelineID=p1, force: false";
    let mut lines = dn1();
    lines.push(proposed(oz(
        50,
        "Command processor thread",
        "DEBUG",
        STATE,
        &format!("Handing out command {stale}, termOfLeaderSCM 2."),
    )));
    let judgements = judge(&[(
        DATANODE,
        "ozone-hadoop-datanode-dn1.log",
        text(&lines, true),
    )]);
    let below = judgements
        .iter()
        .find(|j| j.property == "no command below a term already taken")
        .expect("the monitor");
    let Verdict::Violated(finding) = &below.verdict else {
        panic!("{below}");
    };
    assert!(
        finding
            .violation
            .detail
            .contains("of term 1 was dispatched after the datanode took term 2"),
        "{}",
        finding.violation.detail
    );
}

/// What the page's table says of each proposed statement: (format, class, level,
/// message).
fn page_statements() -> Vec<(String, String, String, String)> {
    table("proposed")
        .into_iter()
        .map(|cells| {
            let code = |c: &str| c.trim_matches('`').to_owned();
            (
                cells[1].clone(),
                code(&cells[2]),
                cells[3].clone(),
                code(&cells[4]),
            )
        })
        .collect()
}

fn as_rows<I>(format: &str, statements: &[Statement<I>]) -> Vec<(String, String, String, String)> {
    statements
        .iter()
        .map(|s| {
            (
                format.to_owned(),
                s.class.to_owned(),
                s.level.word().to_owned(),
                s.template.to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_pages_proposed_statements_are_the_parsers() {
    let mut code = as_rows("ozone-datanode", ozone_datanode::PROPOSED);
    code.extend(as_rows("ozone-scm", ozone_scm::PROPOSED));
    code.extend(as_rows("hdfs-namenode", hdfs_namenode::PROPOSED));
    assert_eq!(page_statements(), code);
}
