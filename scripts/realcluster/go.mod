module github.com/namecast/namecast/scripts/realcluster

go 1.26
