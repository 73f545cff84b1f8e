//! The monitors over upstream's own logs: realistic excerpts, written as Ozone and
//! Hadoop write them, judged as `cargo soak check-log --format …` judges them. A
//! deposed SCM leader's command run after a datanode's restart is caught from the SCMs'
//! and the datanode's logs merged; a standby's corrupt mark, a block deleted and then
//! repaired back are caught from one process's log; and wherever a log cannot show what a
//! verdict rests on, the verdict is undecided, never ok.

use std::path::PathBuf;

use hadoop_ref::check::monitor::offline::{LogSource, check_reader_as, check_run};
use hadoop_ref::check::monitor::{Judgement, MonitorSet, Verdict};
use hadoop_ref::story::LogFormat;
use hadoop_ref::story::upstream::UpstreamFormat;

const DATANODE: LogFormat = LogFormat::Upstream(UpstreamFormat::OzoneDatanode);
const SCM: LogFormat = LogFormat::Upstream(UpstreamFormat::OzoneScm);
const NAMENODE: LogFormat = LogFormat::Upstream(UpstreamFormat::HdfsNamenode);

const BELOW: &str = "no command below a term already taken";
const COVERS: &str = "term covers every term heard";
const DEPOSED: &str = "no command of a leader deposed before the restart";
const NOT_LIVE: &str = "a block whose deletion was executed is not live";
const WITH_FILE: &str = "block metadata only with its file";
const PASSIVE: &str = "standby is passive";
const FALSE_CORRUPTION: &str = "no false corruption";

/// An Ozone line (`%d{ISO8601} [%t] %-5p %c{2}: %m`) at second `s` past 10:00.
fn oz(s: u32, thread: &str, level: &str, logger: &str, message: &str) -> String {
    format!("2025-03-01 10:00:{s:02},000 [{thread}] {level:<5} {logger}: {message}\n")
}

/// A Hadoop line (`%d{ISO8601} %p %c: %m`) at second `s` past 10:00.
fn hd(s: u32, level: &str, logger: &str, message: &str) -> String {
    format!("2025-03-01 10:00:{s:02},000 {level} {logger}: {message}\n")
}

fn verdict(judgements: &[Judgement], property: &str) -> Verdict {
    judgements
        .iter()
        .find(|j| j.property == property)
        .unwrap_or_else(|| panic!("no monitor of {property}"))
        .verdict
        .clone()
}

fn undecided_for(verdict: &Verdict, why: &str) -> bool {
    matches!(verdict, Verdict::Undecided { missing } if missing.contains(why))
}

fn judge(format: LogFormat, node: &str, text: &str) -> Vec<Judgement> {
    check_reader_as(format, node, std::io::Cursor::new(text.to_owned()))
        .expect("a readable log")
        .judgements
}

/// Writes the logs to files and judges them as one run.
fn judge_merged(logs: &[(LogFormat, &str, String)]) -> Vec<Judgement> {
    let dir = tempfile::tempdir().unwrap();
    let sources: Vec<LogSource> = logs
        .iter()
        .map(|(format, name, text)| {
            let path: PathBuf = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            LogSource::new(*format, &path)
        })
        .collect();
    check_run(&sources).expect("readable logs").judgements
}

const STARTER: &str = "server.StorageContainerManagerStarter";
const CONTEXT: &str = "ha.SCMContext";

/// Two SCMs: scm1 leads in term 1 until second 9; scm2 leads in term 2 from second 5.
fn scm_logs() -> Vec<(LogFormat, &'static str, String)> {
    let scm1 = [
        oz(0, "main", "INFO", STARTER, "STARTUP_MSG: "),
        "/************************************************************\n".to_owned(),
        oz(
            1,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <false,0> to <true,1>",
        ),
        oz(
            1,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeaderReady> from <false> to <true>",
        ),
        oz(
            9,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <true,1> to <false,0>",
        ),
    ]
    .concat();
    let scm2 = [
        oz(0, "main", "INFO", STARTER, "STARTUP_MSG: "),
        oz(
            5,
            "sm",
            "INFO",
            CONTEXT,
            "update <isLeader,term> from <false,0> to <true,2>",
        ),
    ]
    .concat();
    vec![
        (SCM, "ozone-hadoop-scm-scm1.log", scm1),
        (SCM, "ozone-hadoop-scm-scm2.log", scm2),
    ]
}

const REPLICATE_1: &str = "replicateContainerCommand: cmdID: 8, encodedToken: \"\", term: 1, deadlineMsSinceEpoch: 0, containerId=5, replicaIndex=0, targetNode=dn2, priority=NORMAL";
const REPLICATE_2: &str = "replicateContainerCommand: cmdID: 9, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, containerId=6, replicaIndex=0, targetNode=dn2, priority=NORMAL";

/// A datanode restarted at second 10 that drops a stale close command, then runs (or, its
/// handler's fence holding, skips) the deposed leader's replication.
fn datanode_log(stale_run: bool) -> String {
    let close = "closeContainerCommand: cmdID: 7, encodedToken: \"\", term: 1, deadlineMsSinceEpoch: 0, containerID: 3, pipelineID: PipelineID=ab, force: false";
    let supervisor = "replication.ReplicationSupervisor";
    let stale = if stale_run {
        oz(
            12,
            "Replication-0",
            "INFO",
            supervisor,
            &format!("Successful DONE {REPLICATE_1}"),
        )
    } else {
        let task = format!("QUEUED {REPLICATE_1}, queued at 2025-03-01T10:00:10Z");
        oz(
            12,
            "Replication-0",
            "INFO",
            supervisor,
            &format!("Ignoring {task} since SCM leader has new term (1 < 2)"),
        )
    };
    [
        oz(10, "main", "INFO", "ozone.HddsDatanodeService", "STARTUP_MSG: "),
        oz(11, "Command processor thread", "WARN", "statemachine.StateContext", &format!("Detect and drop a SCMCommand {close} from stale leader SCM, stale term 1, latest term 2.")),
        stale,
        oz(13, "Replication-1", "INFO", supervisor, &format!("Successful DONE {REPLICATE_2}")),
    ]
    .concat()
}

#[test]
fn a_deposed_leaders_command_run_after_a_restart_is_caught_from_the_merged_logs() {
    let mut logs = scm_logs();
    logs.push((
        DATANODE,
        "ozone-hadoop-datanode-dn1.log",
        datanode_log(true),
    ));
    let judgements = judge_merged(&logs);
    let Verdict::Violated(finding) = verdict(&judgements, DEPOSED) else {
        panic!("{judgements:?}");
    };
    assert!(
        finding
            .violation
            .detail
            .contains("dn1: command ReplicateContainer")
    );
    assert!(
        finding
            .violation
            .detail
            .contains("of term 1 ran although every leader had term >= 2")
    );
}

#[test]
fn a_datanode_whose_fence_holds_is_undecided_not_ok() {
    let mut logs = scm_logs();
    logs.push((
        DATANODE,
        "ozone-hadoop-datanode-dn1.log",
        datanode_log(false),
    ));
    let judgements = judge_merged(&logs);
    // The term-2 command that ran is judged fine, but a close or delete-blocks command's
    // run is not in a datanode's log: the property cannot be ok.
    assert!(
        undecided_for(&verdict(&judgements, DEPOSED), "command run in full"),
        "{judgements:?}"
    );
}

#[test]
fn a_datanode_log_alone_decides_no_term_property() {
    let judgements = judge(DATANODE, "dn1", &datanode_log(true));
    assert!(undecided_for(
        &verdict(&judgements, BELOW),
        "command dispatched in full: ozone-datanode logs show none"
    ));
    assert!(undecided_for(&verdict(&judgements, COVERS), "term set"));
    assert!(
        matches!(verdict(&judgements, DEPOSED), Verdict::Undecided { .. }),
        "no SCM in a datanode's log"
    );
    for judgement in &judgements {
        assert!(
            !matches!(judgement.verdict, Verdict::Ok { .. }),
            "{judgement}"
        );
    }
}

const DN: &str = "127.0.0.1:9866";
const MANAGER: &str = "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager";
const NAMESYSTEM: &str = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem";
const LOADER: &str = "org.apache.hadoop.hdfs.server.namenode.FSEditLogLoader";
const STATE_CHANGE: &str = "BlockStateChange";

fn reported(s: u32, gs: u32, state: &str) -> String {
    let line = hd(
        s,
        "DEBUG",
        MANAGER,
        &format!("Reported block blk_1073741825_{gs} on {DN} size 1024 replicaState = {state}"),
    );
    // Upstream logs a report twice: on receipt and in the method that judges it.
    format!("{line}{line}")
}

/// A standby that replays a block's addition and completion (genstamp 1001), stores the
/// datanode's FINALIZED replica, then takes out of its queue the RBW report the datanode
/// sent before: trunk ignores it (HDFS-2791), the code before the fix marks it corrupt.
fn standby_log(marks_corrupt: bool, with_trace: bool) -> String {
    let add = "AddBlockOp [path=/f, penultimateBlock=NULL, lastBlock=blk_1073741825_1001, RpcClientId=, RpcCallId=-2]";
    let close = "CloseOp [length=0, inodeId=16386, path=/f, replication=1, mtime=1, atime=1, blockSize=134217728, blocks=[blk_1073741825_1001], permissions=hdfs:supergroup:rw-r--r--, aclEntries=null, clientName=, clientMachine=, overwrite=false, storagePolicyId=0, erasureCodingPolicyId=0, opCode=OP_CLOSE, txid=5]";
    let judged = if marks_corrupt {
        hd(
            9,
            "DEBUG",
            STATE_CHANGE,
            &format!(
                "BLOCK NameSystem.addToCorruptReplicasMap: blk_1073741825_1001 added as corrupt on {DN} by null  because reported replica has invalid state RBW"
            ),
        )
    } else {
        hd(
            9,
            "INFO",
            MANAGER,
            &format!(
                "Received an RBW replica for blk_1073741825_1001 on {DN}: ignoring it, since it is complete with the same genstamp"
            ),
        )
    };
    let trace = |s, op: &str| {
        if with_trace {
            hd(s, "TRACE", LOADER, &format!("replaying edit log: {op}"))
        } else {
            String::new()
        }
    };
    [
        hd(0, "INFO", "org.apache.hadoop.hdfs.server.namenode.NameNode", "STARTUP_MSG: "),
        hd(1, "INFO", NAMESYSTEM, "Starting services required for standby state"),
        trace(2, add),
        reported(3, 1001, "RBW"),
        trace(4, close),
        reported(5, 1001, "FINALIZED"),
        hd(5, "DEBUG", STATE_CHANGE, &format!("BLOCK* addStoredBlock: blockMap updated: {DN} is added to blk_1073741825_1001 size 1024")),
        hd(8, "DEBUG", MANAGER, &format!("Processing previouly queued message ReportedBlockInfo [block=blk_1073741825_1001, dn={DN}, reportedState=RBW]")),
        reported(8, 1001, "RBW"),
        judged,
    ]
    .concat()
}

#[test]
fn a_standby_marking_a_healthy_replica_corrupt_is_caught_from_its_log() {
    let judgements = judge(NAMENODE, "nn2", &standby_log(true, true));
    let Verdict::Violated(passive) = verdict(&judgements, PASSIVE) else {
        panic!("{judgements:?}");
    };
    assert!(passive.violation.detail.contains(
        "nn2 marked 127.0.0.1:9866's replica of blk_1073741825 corrupt while postponing"
    ));
    let Verdict::Violated(false_mark) = verdict(&judgements, FALSE_CORRUPTION) else {
        panic!("{judgements:?}");
    };
    assert!(
        false_mark
            .violation
            .detail
            .contains("is FINALIZED with genstamp 1001")
    );
}

#[test]
fn a_trunk_standby_holds_both_properties_from_its_log() {
    let judgements = judge(NAMENODE, "nn2", &standby_log(false, true));
    assert!(
        matches!(verdict(&judgements, PASSIVE), Verdict::Ok { .. }),
        "{judgements:?}"
    );
    assert!(
        matches!(verdict(&judgements, FALSE_CORRUPTION), Verdict::Ok { .. }),
        "{judgements:?}"
    );
}

#[test]
fn without_the_edit_loaders_trace_no_false_corruption_is_undecided() {
    let judgements = judge(NAMENODE, "nn2", &standby_log(false, false));
    assert!(matches!(verdict(&judgements, PASSIVE), Verdict::Ok { .. }));
    let no_false = verdict(&judgements, FALSE_CORRUPTION);
    assert!(
        undecided_for(
            &no_false,
            "block completed in full: hdfs-namenode logs show none"
        ),
        "{no_false:?}"
    );
}

#[test]
fn a_mark_before_the_log_tells_the_ha_state_leaves_standby_is_passive_undecided() {
    let text: String = standby_log(true, true)
        .lines()
        .filter(|l| !l.contains("STARTUP_MSG") && !l.contains("standby state"))
        .map(|l| format!("{l}\n"))
        .collect();
    let judgements = judge(NAMENODE, "nn2", &text);
    let passive = verdict(&judgements, PASSIVE);
    assert!(
        undecided_for(
            &passive,
            "replica marked corrupt in full: hdfs-namenode logs show some"
        ),
        "{passive:?}"
    );
}

const DELETING: &str = "background.BlockDeletingTask";
const HANDLER: &str = "keyvalue.KeyValueHandler";

/// A datanode that deletes block 7 of container 5, then repairs block `repaired` from a
/// peer.
fn repair_log(repaired: u32) -> String {
    let service = "BlockDeletingService#0";
    [
        oz(1, service, "DEBUG", DELETING, "KeyValueContainerData #5 (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b]), delBlocks: 1"),
        oz(1, service, "DEBUG", DELETING, "Deleting block 7"),
        oz(2, "Reconcile-0", "INFO", HANDLER, "Beginning reconciliation for container 5 with peer dn2. Current data checksum is 1a2b"),
        oz(2, "Reconcile-0", "DEBUG", HANDLER, &format!("Successfully ingested chunk at offset 0 into block {repaired} of container 5 from peer dn2")),
        oz(2, "Reconcile-0", "DEBUG", HANDLER, &format!("Reconciled all 1 chunks in block {repaired} in container 5 from peer dn2")),
        oz(3, "Reconcile-0", "WARN", HANDLER, "Completed reconciliation for container 5 with 1/1 peers. 1 blocks were updated. Data checksum updated from 1a2b to 3c4d"),
    ]
    .concat()
}

/// The datanode's container log: a replica closed (no deletion).
fn container_log() -> String {
    "2025-03-01 10:00:00,500 | INFO  | ID=9 | Index=0 | BCSID=3 | State=CLOSED | Volume=/data/hdds | DataChecksum=0 | \n".to_owned()
}

#[test]
fn a_deleted_block_repaired_back_is_caught_with_the_container_log() {
    let alone = judge(DATANODE, "dn1", &repair_log(7));
    let not_live = verdict(&alone, NOT_LIVE);
    assert!(
        undecided_for(&not_live, "the violation at step 4 is not confirmed"),
        "{not_live:?}"
    );
    let judgements = judge_merged(&[
        (DATANODE, "ozone-hadoop-datanode-dn1.log", repair_log(7)),
        (DATANODE, "dn-container-dn1.log", container_log()),
    ]);
    let Verdict::Violated(finding) = verdict(&judgements, NOT_LIVE) else {
        panic!("{judgements:?}");
    };
    assert!(
        finding
            .violation
            .detail
            .starts_with("dn1 block 7 of c5: deleted at step")
    );
}

#[test]
fn a_repair_that_leaves_the_deleted_block_alone_holds() {
    let judgements = judge(DATANODE, "dn1", &repair_log(8));
    assert_eq!(verdict(&judgements, NOT_LIVE), Verdict::Ok { judged: 1 });
}

#[test]
fn a_block_deleted_during_its_repair_is_caught_with_the_container_log() {
    let service = "BlockDeletingService#0";
    let log = [
        oz(2, "Reconcile-0", "INFO", HANDLER, "Beginning reconciliation for container 5 with peer dn2. Current data checksum is 1a2b"),
        oz(2, "Reconcile-0", "DEBUG", HANDLER, "Successfully ingested chunk at offset 0 into block 7 of container 5 from peer dn2"),
        oz(2, service, "DEBUG", DELETING, "KeyValueContainerData #5 (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b]), delBlocks: 1"),
        oz(2, service, "DEBUG", DELETING, "Deleting block 7"),
        oz(3, "Reconcile-0", "DEBUG", HANDLER, "Reconciled all 1 chunks in block 7 in container 5 from peer dn2"),
    ]
    .concat();
    let alone = judge(DATANODE, "dn1", &log);
    assert!(
        undecided_for(&verdict(&alone, WITH_FILE), "is not confirmed"),
        "{alone:?}"
    );
    let judgements = judge_merged(&[
        (DATANODE, "ozone-hadoop-datanode-dn1.log", log),
        (DATANODE, "dn-container-dn1.log", container_log()),
    ]);
    let Verdict::Violated(finding) = verdict(&judgements, WITH_FILE) else {
        panic!("{judgements:?}");
    };
    assert!(
        finding
            .violation
            .detail
            .contains("metadata committed without its file")
    );
}

#[test]
fn every_event_a_monitor_reads_is_in_the_catalogue() {
    let rows = crate::test_util::catalogue_events();
    for reads in MonitorSet::all().reads() {
        for need in reads.to_hold.iter().chain(reads.to_break) {
            let known = crate::test_util::in_catalogue(&rows, need.component, need.event);
            assert!(known, "{need:?}");
        }
    }
}
