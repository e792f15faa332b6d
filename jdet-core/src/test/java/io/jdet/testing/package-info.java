/**
 * Test support: two NICs on a uniquely named in-process fabric with connected queue pairs and registered buffers,
 * and bounded waits for completions, events and conditions.
 */
package io.jdet.testing;
