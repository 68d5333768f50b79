package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TopicArgumentsTest {

    @Test
    void legalTopicNamesShouldBeNamesAndEverythingElseRegexes() {
        TopicArguments topics =
                TopicArguments.parse(List.of("orders", "orders.eu", "orders\\..*", "pay-1_x", "a{1,2}"));

        assertThat(topics.names()).containsExactly("orders", "orders.eu", "pay-1_x");
        assertThat(topics.patterns()).containsExactly("orders\\..*", "a{1,2}");
    }

    @Test
    void dotsAloneAndOverlongNamesShouldNotBeNames() {
        assertThat(TopicArguments.isTopicName(".")).isFalse();
        assertThat(TopicArguments.isTopicName("..")).isFalse();
        assertThat(TopicArguments.isTopicName("a".repeat(249))).isTrue();
        assertThat(TopicArguments.isTopicName("a".repeat(250))).isFalse();
        assertThat(TopicArguments.isTopicName("a b")).isFalse();
    }

    @Test
    void blankEntriesShouldBeDroppedAndEntriesTrimmed() {
        TopicArguments topics = TopicArguments.parse(List.of(" orders ", "", "  "));

        assertThat(topics.names()).containsExactly("orders");
        assertThat(TopicArguments.parse(List.of("", " ")).isEmpty()).isTrue();
        assertThat(TopicArguments.parse(null).isEmpty()).isTrue();
    }

    @Test
    void aVerbTakingNamesOnlyShouldRefuseARegexNamingIt() {
        TopicArguments topics = TopicArguments.parse(List.of("orders", "pay.*"));

        assertThatThrownBy(() -> topics.namesOnly(Verb.STOP))
                .isInstanceOf(UsageException.class)
                .hasMessage("--stop takes topic names, not regexes (the REST API names each topic): 'pay.*' is not"
                        + " a topic name");
        assertThat(TopicArguments.parse(List.of("orders")).namesOnly(Verb.PAUSE))
                .containsExactly("orders");
    }
}
