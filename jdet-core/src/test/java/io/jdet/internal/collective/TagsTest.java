package io.jdet.internal.collective;

import io.jdet.DetException;
import io.jdet.Errno;
import org.junit.jupiter.api.Test;

import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The process's joined tags: one size per tag, one group per rank, and a tag forgotten once its last rank leaves. */
class TagsTest {
    /** A tag no other test of this JVM uses. */
    private static long freshTag() {
        return ThreadLocalRandom.current().nextLong() | 1L << 62;
    }

    @Test
    void aTagTakesEachRankOnceAndOneSizeOnly() {
        final long tag = freshTag();
        Tags.claim(tag, 4, 0);
        assertEquals(Errno.EEXIST, assertThrows(DetException.class, () -> Tags.claim(tag, 4, 0)).errno(),
            "the rank that made the entry holds it too");
        Tags.claim(tag, 4, 3);
        assertEquals(Errno.EEXIST, assertThrows(DetException.class, () -> Tags.claim(tag, 4, 3)).errno());
        assertEquals(Errno.EEXIST, assertThrows(DetException.class, () -> Tags.claim(tag, 5, 1)).errno());
        Tags.claim(tag, 4, 1);
        Tags.release(tag, 3);
        Tags.claim(tag, 4, 3);
        Tags.release(tag, 0);
        Tags.release(tag, 1);
        Tags.release(tag, 3);
    }

    @Test
    void aTagWhoseLastRankLeftMayBeJoinedWithAnotherSize() {
        final long tag = freshTag();
        Tags.claim(tag, 2, 0);
        Tags.claim(tag, 2, 1);
        Tags.release(tag, 0);
        assertEquals(Errno.EEXIST, assertThrows(DetException.class, () -> Tags.claim(tag, 3, 2)).errno(),
            "rank 1 still holds it");
        Tags.release(tag, 1);
        Tags.claim(tag, 3, 2);
        Tags.release(tag, 2);
        Tags.release(tag, 2);
        Tags.release(freshTag(), 0);
        Tags.claim(tag, 8, 7);
        Tags.release(tag, 7);
    }
}
