//! The Slurm cluster's nodes, for the machines page (the Slurm backend): each node's state
//! and CPUs from `sinfo -N -h -o %N|%T|%c|%C`, and the shards of the server's runs on it
//! from `squeue -h -r -o %i|%N -j JOBS` (the job arrays recorded in each playing run's
//! `jobs.json`). Both are argument vectors run with the cluster tools' timeout
//! (`cluster::slurm::run_tool`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::cluster::coordinator::JobsFile;
use crate::cluster::slurm::run_tool;

/// One node of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Node {
    pub name: String,
    /// Its Slurm state (`idle`, `mixed`, `allocated`, `down`…).
    pub state: String,
    /// Its CPUs, and how many are allocated now.
    pub cpus: Option<u64>,
    pub cpus_allocated: Option<u64>,
    /// The shards of the server's runs it plays now.
    pub shards: Vec<Task>,
}

/// A shard of a run on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Task {
    pub run: i64,
    pub shard: u64,
}

/// The nodes, with the shards of `runs` (run id and its directory) on each; `Err`: what
/// `sinfo` said (or that it could not run).
pub fn nodes(runs: &[(i64, &Path)]) -> Result<Vec<Node>, String> {
    let mut cmd = Command::new("sinfo");
    cmd.args(["-N", "-h", "-o", "%N|%T|%c|%C"]);
    let out = run_tool(cmd).map_err(|e| e.message)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "sinfo failed: {}",
            err.trim().lines().next().unwrap_or("")
        ));
    }
    let mut nodes = parse_sinfo(&String::from_utf8_lossy(&out.stdout));
    let mut owner: BTreeMap<String, i64> = BTreeMap::new();
    for (id, dir) in runs {
        for job in JobsFile::read(&super::slurm::run_dir(dir)).jobs {
            owner.insert(job, *id);
        }
    }
    if owner.is_empty() {
        return Ok(nodes);
    }
    let jobs: Vec<&str> = owner.keys().map(String::as_str).collect();
    let mut cmd = Command::new("squeue");
    cmd.args(["-h", "-r", "-o", "%i|%N", "-j", &jobs.join(",")]);
    // A queue that does not answer leaves the nodes without their shards.
    if let Ok(out) = run_tool(cmd) {
        place(&mut nodes, &String::from_utf8_lossy(&out.stdout), &owner);
    }
    Ok(nodes)
}

/// Reads `NAME|STATE|CPUS|ALLOCATED/IDLE/OTHER/TOTAL` lines, one node once (a node in
/// several partitions has a line for each).
fn parse_sinfo(text: &str) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim().split('|').collect();
        if f.len() < 4 || f[0].is_empty() || nodes.iter().any(|n| n.name == f[0]) {
            continue;
        }
        nodes.push(Node {
            name: f[0].to_string(),
            state: f[1].to_string(),
            cpus: f[2].parse().ok(),
            cpus_allocated: f[3].split('/').next().and_then(|a| a.parse().ok()),
            shards: Vec::new(),
        });
    }
    nodes
}

/// Puts the tasks of `squeue`'s `JOB_TASK|NODE` lines on their nodes (pending tasks have
/// no node), each as the shard of the run that owns its job.
fn place(nodes: &mut [Node], text: &str, owner: &BTreeMap<String, i64>) {
    for line in text.lines() {
        let Some((id, node)) = line.trim().split_once('|') else {
            continue;
        };
        let Some((job, task)) = id.split_once('_') else {
            continue;
        };
        let (Some(&run), Ok(shard)) = (owner.get(job), task.parse::<u64>()) else {
            continue;
        };
        if let Some(n) = nodes.iter_mut().find(|n| n.name == node) {
            n.shards.push(Task { run, shard });
            n.shards.sort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinfo_lines_give_each_node_once() {
        let nodes =
            parse_sinfo("n1|idle|8|0/8/0/8\nn2|mixed|16|4/12/0/16\nn1|idle|8|0/8/0/8\nbad\n");
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].name, "n1");
        assert_eq!(
            (nodes[1].cpus, nodes[1].cpus_allocated),
            (Some(16), Some(4))
        );
        assert_eq!(nodes[1].state, "mixed");
    }

    #[test]
    fn queued_tasks_land_on_their_nodes_as_their_runs_shards() {
        let mut nodes = parse_sinfo("n1|mixed|8|2/6/0/8\nn2|idle|8|0/8/0/8\n");
        let owner = BTreeMap::from([("12".to_string(), 3), ("15".to_string(), 4)]);
        place(
            &mut nodes,
            "12_1|n1\n12_0|n1\n15_2|n2\n12_3|\n99_0|n1\n13|n1\n",
            &owner,
        );
        let t = |run, shard| Task { run, shard };
        assert_eq!(nodes[0].shards, [t(3, 0), t(3, 1)]);
        assert_eq!(nodes[1].shards, [t(4, 2)]);
    }
}
