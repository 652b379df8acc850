//! Static shortest-path routing by hop count, computed once.
//!
//! Hosts never forward. A node with a single outgoing link sends everything on it (most
//! hosts), so only nodes with several links keep a next-hop table. Ties between equal-length
//! paths go to the lowest link index, which keeps routes deterministic.

use std::collections::VecDeque;

/// Sentinel for "no route".
pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop tables.
pub struct Routes {
    /// Per node: its only outgoing link, when it has exactly one.
    single: Vec<u32>,
    /// Per node with several links: next link for every destination node.
    table: Vec<Vec<u32>>,
}

impl Routes {
    /// Compute routes for `n` nodes. `out_links[v]` lists `(link, neighbour)` leaving v;
    /// `forwards[v]` says whether v may carry transit traffic (routers).
    pub fn compute(out_links: &[Vec<(u32, u32)>], forwards: &[bool]) -> Routes {
        let n = out_links.len();
        let single: Vec<u32> =
            out_links.iter().map(|l| if l.len() == 1 { l[0].0 } else { NO_ROUTE }).collect();
        let mut table: Vec<Vec<u32>> =
            (0..n).map(|v| if out_links[v].len() > 1 { vec![NO_ROUTE; n] } else { Vec::new() }).collect();
        // in_links[v]: (link, from) arriving at v, for the backward search.
        let mut in_links: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (v, links) in out_links.iter().enumerate() {
            for &(l, w) in links {
                in_links[w as usize].push((l, v as u32));
            }
        }
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst as u32);
            while let Some(w) = queue.pop_front() {
                // Only the destination itself and routers can be on the way to it.
                if w as usize != dst && !forwards[w as usize] {
                    continue;
                }
                for &(_, v) in &in_links[w as usize] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[w as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for v in 0..n {
                if table[v].is_empty() || v == dst {
                    continue;
                }
                // The lowest-index link to a neighbour one hop closer.
                table[v][dst] = out_links[v]
                    .iter()
                    .filter(|&&(_, w)| {
                        dist[w as usize] != u32::MAX
                            && dist[w as usize] + 1 == dist[v]
                            && (w as usize == dst || forwards[w as usize])
                    })
                    .map(|&(l, _)| l)
                    .min()
                    .unwrap_or(NO_ROUTE);
            }
        }
        Routes { single, table }
    }

    /// The only link leaving `node`, or `NO_ROUTE` when it has none or several.
    pub fn only_link(&self, node: u32) -> u32 {
        self.single[node as usize]
    }

    /// The link `node` uses towards `dst`.
    #[inline]
    pub fn next_link(&self, node: u32, dst: u32) -> u32 {
        let s = self.single[node as usize];
        if s != NO_ROUTE {
            return s;
        }
        match self.table[node as usize].get(dst as usize) {
            Some(&l) => l,
            None => NO_ROUTE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_paths_through_routers_only() {
        // h0 - r1 - r2 - h3, plus a longer detour r1 - r4 - r5 - r2 and a host h6 on r1 that
        // must never be used for transit (link r1-h6-r2 would be a shortcut through a host).
        // Links (directed): index = position.
        let links = [
            (0, 1), (1, 0), // 0,1: h0-r1
            (1, 2), (2, 1), // 2,3: r1-r2
            (2, 3), (3, 2), // 4,5: r2-h3
            (1, 4), (4, 1), // 6,7
            (4, 5), (5, 4), // 8,9
            (5, 2), (2, 5), // 10,11
            (1, 6), (6, 1), // 12,13: r1-h6
            (6, 2), (2, 6), // 14,15: h6-r2
        ];
        let mut out = vec![Vec::new(); 7];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[a].push((i as u32, b as u32));
        }
        let forwards = [false, true, true, false, true, true, false];
        let r = Routes::compute(&out, &forwards);
        assert_eq!(r.next_link(0, 3), 0); // host with one link
        assert_eq!(r.next_link(1, 3), 2); // r1 -> r2 directly, not via h6
        assert_eq!(r.next_link(2, 0), 3);
        assert_eq!(r.next_link(2, 3), 4);
        assert_eq!(r.next_link(1, 4), 6);
        // r1 -> r5: two hops via r2 (link 2) or r4 (link 6); the tie goes to the lower index.
        assert_eq!(r.next_link(1, 5), 2);
    }
}
