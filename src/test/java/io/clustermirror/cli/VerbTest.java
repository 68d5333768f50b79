package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class VerbTest {

    @Test
    void theOneActionGivenShouldBeTheVerb() {
        assertThat(Verb.of(Set.of("--list"))).isEqualTo(Verb.LIST);
        assertThat(Verb.of(Set.of("--stop", "--mirror", "--topics", "--url", "--user")))
                .isEqualTo(Verb.STOP);
        assertThat(Verb.of(
                        Set.of("--promote", "--mirror", "--topics", "--exclude", "--timeout-ms", "--no-fence-source")))
                .isEqualTo(Verb.PROMOTE);
    }

    @Test
    void noActionOrTwoShouldBeRefusedNamingThem() {
        assertThatThrownBy(() -> Verb.of(Set.of("--mirror")))
                .isInstanceOf(UsageException.class)
                .hasMessageStartingWith("give one action: --create --alter --delete --list --describe");
        assertThatThrownBy(() -> Verb.of(Set.of("--stop", "--delete", "--mirror", "--topics")))
                .hasMessage("give only one action, not --delete and --stop");
    }

    @Test
    void aMissingRequiredOptionShouldBeNamed() {
        assertThatThrownBy(() -> Verb.of(Set.of("--create", "--mirror"))).hasMessage("--create needs --mirror-config");
        assertThatThrownBy(() -> Verb.of(Set.of("--start"))).hasMessage("--start needs --mirror, --topics");
        assertThatThrownBy(() -> Verb.of(Set.of("--alter", "--mirror")))
                .hasMessage("--alter needs --mirror-config or --delete-config");
        assertThatThrownBy(() -> Verb.of(Set.of("--describe", "--topics")))
                .hasMessage("--describe needs --mirror (the mirror of --topics)");
    }

    @Test
    void anOptionTheVerbWouldIgnoreShouldBeRefused() {
        assertThatThrownBy(() -> Verb.of(Set.of("--stop", "--mirror", "--topics", "--exclude")))
                .hasMessage("--stop does not take --exclude");
        assertThatThrownBy(() -> Verb.of(Set.of("--list", "--failed", "--mirror")))
                .hasMessage("--list does not take --failed, --mirror");
        assertThatThrownBy(() -> Verb.of(Set.of("--create", "--mirror", "--mirror-config", "--json")))
                .hasMessage("--create does not take --json");
    }

    @Test
    void everyVerbShouldTakeTheConnectionOptions() {
        Map<Verb, Set<String>> minimal = new EnumMap<>(Verb.class);
        minimal.put(Verb.CREATE, Set.of("--mirror", "--mirror-config"));
        minimal.put(Verb.ALTER, Set.of("--mirror", "--delete-config"));
        minimal.put(Verb.DELETE, Set.of("--mirror"));
        minimal.put(Verb.LIST, Set.of());
        minimal.put(Verb.DESCRIBE, Set.of());
        minimal.put(Verb.INSTANCES, Set.of());
        for (Verb verb : List.of(Verb.START, Verb.STOP, Verb.PAUSE, Verb.RESUME, Verb.RECOVER, Verb.PROMOTE)) {
            minimal.put(verb, Set.of("--mirror", "--topics"));
        }
        assertThat(minimal).hasSize(Verb.values().length);
        for (Verb verb : Verb.values()) {
            Set<String> given = new HashSet<>(Verb.CONNECTION);
            given.add(verb.option());
            given.addAll(minimal.get(verb));

            assertThat(Verb.of(given)).as(verb.option()).isEqualTo(verb);
        }
    }

    @Test
    void onlyStartAndPromoteShouldTakeRegexes() {
        assertThat(Set.of(Verb.values()).stream().filter(Verb::takesTopicPatterns))
                .containsExactlyInAnyOrder(Verb.START, Verb.PROMOTE);
    }
}
