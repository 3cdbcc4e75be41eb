package promsink

// helps is the HELP text of each series, by its Prometheus name (Name).
// A series missing here still gets a readable one (defaultHelp); add a line
// when you add a series.
var helps = map[string]string{
	// The route table and gossip (package gossip).
	"namecast_routes_origins":                          "Agents whose records this agent's table holds (itself included).",
	"namecast_routes_records":                          "Records in this agent's route table, from every origin.",
	"namecast_routes_local_changes_total":              "Changes written through this agent's doors (registrations, renewals, withdrawals).",
	"namecast_budget_refused_total":                    "Writes refused because this agent's records would pass --max-records or --max-records-mib.",
	"namecast_gossip_origins_refused_total":            "Times another agent's records passed this agent's budget and were dropped whole.",
	"namecast_gossip_members":                          "Cluster members this agent sees alive.",
	"namecast_gossip_queued":                           "Gossip broadcasts waiting to be sent.",
	"namecast_gossip_ops_queued_total":                 "Route changes queued for gossip.",
	"namecast_gossip_ops_applied_total":                "Route changes received from peers and applied.",
	"namecast_gossip_ops_stale_total":                  "Route changes received from peers that were older than what the table holds.",
	"namecast_gossip_ops_invalid_total":                "Route changes received from peers that were refused as invalid.",
	"namecast_gossip_ops_not_alive_total":              "Route changes received for an origin not alive, not applied.",
	"namecast_gossip_ops_relayed_total":                "Route changes relayed on to other peers.",
	"namecast_gossip_notices_queued_total":             "Notices (deaths, leaves) queued for gossip.",
	"namecast_gossip_messages_malformed_total":         "Gossip messages that could not be decoded and were dropped.",
	"namecast_gossip_push_sent_total":                  "Changes pushed directly to peers.",
	"namecast_gossip_push_over_budget_total":           "Direct pushes skipped because the push budget was spent.",
	"namecast_gossip_direct_sent_total":                "Messages sent directly to peers.",
	"namecast_gossip_direct_over_budget_total":         "Direct messages skipped because the direct-send budget was spent.",
	"namecast_gossip_view_repaired_total":              "Times this agent's view of an origin was repaired from a peer.",
	"namecast_gossip_join_reannounced_total":           "Times a lone agent announced itself again to the members it joined.",
	"namecast_gossip_join_refreshed_total":             "Times a lone agent refreshed its table from the members it joined.",
	"namecast_gossip_deaths_contradicted_total":        "Deaths of an origin that a newer incarnation contradicted.",
	"namecast_gossip_deaths_refuted_total":             "Deaths of this agent that it refuted.",
	"namecast_gossip_origins_dropped_total":            "Origins whose records were dropped (dead or left).",
	"namecast_gossip_origins_swept_total":              "Dead origins swept from the table after their grace.",
	"namecast_gossip_work_dropped_total":               "Gossip work items dropped because the queue was full.",
	"namecast_gossip_queue_pruned_total":               "Queued broadcasts pruned to keep the queue bounded.",
	"namecast_gossip_incarnation_raised_total":         "Times this agent raised its incarnation.",
	"namecast_gossip_streams_refused_total":            "Gossip streams refused for a bound.",
	"namecast_antientropy_pulls_total":                 "Origins pulled from peers by anti-entropy.",
	"namecast_antientropy_pulls_unknown_sender_total":  "Anti-entropy pulls refused because the sender is not a member.",
	"namecast_antientropy_summaries_total":             "Anti-entropy summaries compared with a peer's.",
	"namecast_antientropy_summaries_differ_total":      "Anti-entropy summaries that differed from the peer's.",
	"namecast_antientropy_digests_total":               "Anti-entropy digests sent.",
	"namecast_antientropy_snapshots_merged_total":      "Anti-entropy snapshots merged into the table.",
	"namecast_antientropy_snapshots_split_total":       "Anti-entropy snapshots split into parts to fit a message.",
	"namecast_antientropy_join_asks_over_budget_total": "Snapshot requests from joining members refused for the budget.",
	"namecast_antientropy_join_asks_skipped_total":     "Snapshot requests from joining members skipped (already answered).",
	"namecast_registrations_expired_total":             "HTTP registrations with a TTL that expired.",

	// memberlist (SWIM membership).
	"namecast_memberlist_gossip_seconds":           "Time memberlist takes for one gossip round.",
	"namecast_memberlist_probe_node_seconds":       "Time memberlist takes to probe one member.",
	"namecast_memberlist_push_pull_node_seconds":   "Time memberlist takes for one push-pull state sync with a member.",
	"namecast_memberlist_msg_alive_total":          "Alive messages memberlist handled.",
	"namecast_memberlist_msg_suspect_total":        "Suspect messages memberlist handled.",
	"namecast_memberlist_msg_dead_total":           "Dead messages memberlist handled.",
	"namecast_memberlist_degraded_probe_total":     "Probes memberlist made while its own health was degraded.",
	"namecast_memberlist_degraded_timeout_total":   "Suspicion timeouts memberlist stretched while degraded.",
	"namecast_memberlist_health_score":             "memberlist's awareness score: 0 is healthy, higher means this agent is slow to answer.",
	"namecast_memberlist_tcp_accept_total":         "TCP connections memberlist accepted.",
	"namecast_memberlist_tcp_connect_total":        "TCP connections memberlist opened.",
	"namecast_memberlist_tcp_sent_bytes_total":     "Bytes memberlist sent over TCP.",
	"namecast_memberlist_udp_sent_bytes_total":     "Bytes memberlist sent over UDP.",
	"namecast_memberlist_udp_received_bytes_total": "Bytes memberlist received over UDP.",
	"namecast_memberlist_size_local_bytes":         "Size of this agent's last push-pull state.",
	"namecast_memberlist_size_remote_bytes":        "Size of the push-pull states received from members.",
	"namecast_memberlist_queue_broadcasts":         "memberlist broadcasts queued, sampled.",
	"namecast_memberlist_node_instances":           "Members memberlist knows, by state.",

	// The HTTP door.
	"namecast_http_get_seconds":               "Time to answer an HTTP GET.",
	"namecast_http_put_seconds":               "Time to answer an HTTP PUT.",
	"namecast_http_post_seconds":              "Time to answer an HTTP POST.",
	"namecast_http_delete_seconds":            "Time to answer an HTTP DELETE.",
	"namecast_http_refused_total":             "HTTP requests refused by the guard against web pages (Host or Origin).",
	"namecast_http_connections_refused_total": "HTTP connections refused because the connection bound was reached.",

	// The RocketMQ door.
	"namecast_rocketmq_requests_total":            "RocketMQ NameServer requests, by request code.",
	"namecast_rocketmq_frame_errors_total":        "RocketMQ frames that could not be decoded (the connection is closed).",
	"namecast_rocketmq_connections_refused_total": "RocketMQ connections refused because the connection bound was reached.",
	"namecast_rocketmq_connections":               "Open RocketMQ connections.",
	"namecast_rocketmq_live_brokers":              "Brokers registered through this agent's RocketMQ door and alive.",

	// The ZooKeeper door.
	"namecast_zookeeper_requests_total":      "ZooKeeper requests, by operation and error code.",
	"namecast_zookeeper_latency_seconds":     "Mean time to answer a ZooKeeper request over each flush interval, by operation.",
	"namecast_zookeeper_latency_max_seconds": "Longest time to answer a ZooKeeper request in the last flush interval, by operation.",
	"namecast_zookeeper_sessions":            "Live ZooKeeper sessions.",
	"namecast_zookeeper_connections":         "Open ZooKeeper connections.",
	"namecast_zookeeper_watches":             "ZooKeeper watches set.",
	"namecast_zookeeper_znodes":              "Znodes in the ZooKeeper door's tree.",
	"namecast_zookeeper_notifications_total": "ZooKeeper watch notifications sent.",

	// The DNS door.
	"namecast_dns_queries_total":             "DNS queries answered, by question type and response code (none: not a query, no reply).",
	"namecast_dns_latency_seconds":           "Mean time to answer a DNS query over each flush interval.",
	"namecast_dns_latency_max_seconds":       "Longest time to answer a DNS query in the last flush interval.",
	"namecast_dns_connections":               "Open DNS TCP connections.",
	"namecast_dns_refused_connections_total": "DNS TCP connections refused at the door's bound.",

	// The Nacos door.
	"namecast_nacos_requests_total":               "Nacos gRPC requests, by type and result code (0 is success).",
	"namecast_nacos_http_requests_total":          "Nacos 1.x HTTP API requests, by route and status.",
	"namecast_nacos_pushes_total":                 "Nacos pushes to clients (service changes, config changes), by type and result.",
	"namecast_nacos_connections":                  "Set-up Nacos gRPC connections.",
	"namecast_nacos_closing":                      "Closed Nacos gRPC connections whose instances are still within their grace.",
	"namecast_nacos_subscribers":                  "Nacos service subscriptions.",
	"namecast_nacos_config_listeners":             "Nacos config listeners.",
	"namecast_nacos_instances":                    "Ephemeral Nacos instances the door holds.",
	"namecast_nacos_http_instances":               "Nacos instances registered over the 1.x HTTP API (kept alive by beats).",
	"namecast_nacos_http_config_listeners":        "Nacos 1.x config long polls held (POST /nacos/v1/cs/configs/listener).",
	"namecast_nacos_http_listeners_refused_total": "Nacos 1.x config long polls refused at the door's bound (MaxListeners), by reason.",
}

// Described says whether name is a series help.go describes (or the build
// info), for checks that documents and alert rules name real series.
func Described(name string) bool {
	_, ok := helps[name]
	return ok || name == "namecast_build_info"
}
