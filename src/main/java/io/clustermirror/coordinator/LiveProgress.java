package io.clustermirror.coordinator;

import io.clustermirror.mirror.OpenTransaction;
import java.util.List;

/** What the data plane knows now of a partition it mirrors: the last mirrored epoch, and the transactions it holds open. */
public record LiveProgress(int lastMirroredEpoch, List<OpenTransaction> openTransactions) {

    public LiveProgress {
        openTransactions = List.copyOf(openTransactions);
    }
}
