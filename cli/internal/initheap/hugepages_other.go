//go:build !linux

package initheap

func adviseHugePages() {}

func withdrawHugePages() {}
