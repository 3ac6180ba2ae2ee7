# SPDX-License-Identifier: MIT
# networkx (Debian's python3-networkx) on a seeded random graph: the third
# real program of test_py_realprog.sh.
import sys

import networkx as nx

n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
G = nx.gnm_random_graph(n, 4 * n, seed=7)
bc = nx.betweenness_centrality(G)
cc = nx.clustering(G)
mst = nx.minimum_spanning_tree(G)
comps = list(nx.connected_components(G))
sp = dict(nx.all_pairs_shortest_path_length(G))
print(len(bc), round(sum(cc.values()), 6), mst.number_of_edges(), len(comps),
      len(sp))
