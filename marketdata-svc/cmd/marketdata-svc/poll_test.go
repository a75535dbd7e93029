package main

import "sync"

// poll runs n workers, each calling work with its index over and over,
// until the stop it returns is called; stop waits for them to end. The
// replica tests poll every instance this way while they change its data
// or revoke its keys.
func poll(n int, work func(i int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				work(i)
			}
		})
	}
	return func() { close(done); wg.Wait() }
}
