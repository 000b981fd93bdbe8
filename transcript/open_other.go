//go:build !unix

package transcript

// openNonBlock is nothing where there are no FIFOs to wait on.
const openNonBlock = 0
