module github.com/namecast/namecast/test/zookeeper

go 1.26.0

replace github.com/namecast/namecast => ../..

require github.com/namecast/namecast v0.0.0-00010101000000-000000000000

require github.com/go-zookeeper/zk v1.0.4
