// Run > Settings: SearchSettings validation and persistence (no key ever stored) and the dialog
// (OK only while valid, the key variable's state without its value).

#include "views/settings/SettingsDialog.h"
#include "models/SearchSettings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

using kforge::app::SearchSettings;
using kforge::views::SettingsDialog;

class SettingsDialogTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void validationNamesTheField()
    {
        SearchSettings s;
        QVERIFY(s.validate().isEmpty()); // built-in, 50 iterations
        s.proposer = QStringLiteral("openai");
        QVERIFY(s.validate().startsWith(QStringLiteral("model:")));
        s.model = QStringLiteral("gpt-test");
        QVERIFY(s.validate().isEmpty());
        s.apiKeyEnv = QStringLiteral("sk-live-0123456789abcdef");
        const QString why = s.validate();
        QVERIFY(why.startsWith(QStringLiteral("API key variable:")));
        QVERIFY2(!why.contains(QStringLiteral("0123456789")), qPrintable(why)); // a pasted key is not echoed
        s.apiKeyEnv = QStringLiteral("MY_KEY");
        s.baseUrl = QStringLiteral("localhost:8000");
        QVERIFY(s.validate().startsWith(QStringLiteral("endpoint:")));
        s.baseUrl = QStringLiteral("http://localhost:8000/v1");
        s.iterations = 0;
        QVERIFY(s.validate().startsWith(QStringLiteral("iterations:")));
        s.proposer = QStringLiteral("gemini");
        QVERIFY(s.validate().startsWith(QStringLiteral("proposer:")));
    }

    void gpusAreACommaListOrEmpty()
    {
        SearchSettings s;
        for (const char* ok : {"", "0", "0,2", " 1 , 3 ", "0,0"}) {
            s.gpus = QString::fromLatin1(ok);
            QVERIFY2(s.validate().isEmpty(), ok);
        }
        for (const char* bad : {"all", "0;1", "1,", "-1"}) {
            s.gpus = QString::fromLatin1(bad);
            QVERIFY2(s.validate().startsWith(QStringLiteral("GPUs:")), bad);
        }
        SettingsDialog dialog(s);
        auto* gpus = dialog.findChild<QLineEdit*>(QStringLiteral("settingsGpus"));
        QVERIFY(gpus);
        gpus->setText(QStringLiteral("0,2"));
        QCOMPARE(dialog.settings().gpus, QStringLiteral("0,2"));
    }

    void roundTripsThroughQSettingsAndStoresNoKey()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("settings.ini"));
        qputenv("KFORGE_SETTINGS_TEST_KEY", "super-secret-value");
        SearchSettings s;
        s.proposer = QStringLiteral("anthropic");
        s.model = QStringLiteral("claude-test");
        s.apiKeyEnv = QStringLiteral("KFORGE_SETTINGS_TEST_KEY");
        s.iterations = 120;
        s.timeLimitS = 600;
        s.gpus = QStringLiteral("0,2");
        {
            QSettings settings(file, QSettings::IniFormat);
            s.save(settings);
        }
        QSettings settings(file, QSettings::IniFormat);
        QCOMPARE(SearchSettings::load(settings), s);
        QFile raw(file);
        QVERIFY(raw.open(QIODevice::ReadOnly));
        const QByteArray text = raw.readAll();
        QVERIFY(text.contains("KFORGE_SETTINGS_TEST_KEY"));
        QVERIFY(!text.contains("super-secret-value"));
    }

    void okOnlyWhileValidAndTheKeyIsNeverShown()
    {
        qputenv("KFORGE_SETTINGS_TEST_KEY", "super-secret-value");
        SettingsDialog dialog(SearchSettings{});
        auto* proposer = dialog.findChild<QComboBox*>(QStringLiteral("settingsProposer"));
        auto* model = dialog.findChild<QLineEdit*>(QStringLiteral("settingsModel"));
        auto* keyEnv = dialog.findChild<QLineEdit*>(QStringLiteral("settingsApiKeyEnv"));
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("settingsKeyStatus"));
        QPushButton* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QVERIFY(proposer && model && keyEnv && status && ok);
        QVERIFY(ok->isEnabled());
        QVERIFY(!model->isEnabled()); // built-in: no model, no key

        proposer->setCurrentIndex(proposer->findData(QStringLiteral("openai")));
        QVERIFY(model->isEnabled());
        QVERIFY(!ok->isEnabled());
        QVERIFY(dialog.problem().startsWith(QStringLiteral("model:")));
        QTest::keyClicks(model, QStringLiteral("qwen-coder"));
        QVERIFY(ok->isEnabled());

        QTest::keyClicks(keyEnv, QStringLiteral("KFORGE_SETTINGS_TEST_KEY"));
        QVERIFY2(status->text().contains(QStringLiteral("is set")), qPrintable(status->text()));
        QVERIFY(!status->text().contains(QStringLiteral("super-secret-value")));
        keyEnv->setText(QStringLiteral("KFORGE_SETTINGS_TEST_UNSET_VARIABLE"));
        QVERIFY(status->text().contains(QStringLiteral("is not set")));

        const SearchSettings edited = dialog.settings();
        QCOMPARE(edited.proposer, QStringLiteral("openai"));
        QCOMPARE(edited.model, QStringLiteral("qwen-coder"));
        QCOMPARE(edited.apiKeyEnv, QStringLiteral("KFORGE_SETTINGS_TEST_UNSET_VARIABLE"));
    }
};

QTEST_MAIN(SettingsDialogTest)
#include "SettingsDialogTest.moc"
