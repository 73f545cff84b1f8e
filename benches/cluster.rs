//! A `MiniOzoneCluster` of 3 SCMs and 100 datanodes: one heartbeat round (`tick`: the
//! leader's replication manager and block deleting service, then each datanode's
//! heartbeat to each of the 3 SCMs, its commands and its deleting round). The cluster
//! holds 50 keys of 4 blocks on 3 replicas each; the first round of every sample deletes
//! nothing new, so a round is the steady state of a quiet cluster with full container
//! reports. The figure is 1,000 rounds: ten times this bench's samples.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;

fn heartbeat_round(c: &mut Criterion) {
    let cluster = MiniOzoneCluster::builder()
        .scms(3)
        .datanodes(100)
        .build()
        .expect("the cluster starts");
    let keys: Vec<_> = (0..50)
        .map(|_| cluster.write_key(4).expect("a key is written"))
        .collect();
    for key in keys.iter().step_by(2) {
        cluster.delete_key(key).expect("a key is deleted");
    }
    cluster
        .run_until_quiescent(100)
        .expect("the deletions settle");
    let mut group = c.benchmark_group("cluster_heartbeat_round");
    group
        .sample_size(100)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("3_scms_100_datanodes", |b| {
        b.iter(|| cluster.tick().expect("a round runs"));
    });
    group.finish();
}

criterion_group!(benches, heartbeat_round);
criterion_main!(benches);
