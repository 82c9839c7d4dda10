# signupd の日本語: 訪問者がページと 2 通のメールで読むすべての言葉。
# メッセージ ID と変数($list、$site など)は en.ftl と同じです。
#
# 文体: です・ます調。短い文で。
# 用語集:
#   sign up / signup        - 登録する / 登録(メール配信の登録)
#   confirm                 - 確認する / 登録の確認
#   list                    - 配信リスト($list はその名前)
#   remove (my address)     - (メールアドレスを)削除する / 配信を停止する
#   preferences             - 配信設定 / 配信設定ページ
#   email address           - メールアドレス
#   link                    - リンク
#   subscription            - 登録
#   unsubscribe             - 配信を停止する
#   mail                    - メール
#   one-way hash            - 一方向ハッシュ

## Mail dates

date-format = { $year }年{ $month }{ $day }日 { $time } UTC
date-month-1 = 1月
date-month-2 = 2月
date-month-3 = 3月
date-month-4 = 4月
date-month-5 = 5月
date-month-6 = 6月
date-month-7 = 7月
date-month-8 = 8月
date-month-9 = 9月
date-month-10 = 10月
date-month-11 = 11月
date-month-12 = 12月

## Durations (日本語の複数形は other のみ)

duration-second =
    { $n ->
       *[other] { $n }秒
    }
duration-minute =
    { $n ->
       *[other] { $n }分
    }
duration-hour =
    { $n ->
       *[other] { $n }時間
    }
duration-day =
    { $n ->
       *[other] { $n }日
    }
duration-and = { $init }、{ $last }
duration-separator = {"、"}
duration-per = { $duration }あたり{ $n }件

## page

page-back-to = { $site } に戻る
page-privacy = 保存する情報と保存期間
page-languages = ほかの言語：

## errors

errors-unavailable-title = もう一度お試しください
errors-unavailable = ただいま処理できませんでした。1分ほどしてからもう一度お試しください。
errors-not-found-title = ページが見つかりません
errors-not-found = ここには登録フォームがありません。
errors-not-found-link = 登録フォームへ
errors-incomplete-title = このリンクは不完全です
errors-incomplete = リンクが途中で切れているか、変更されているようです。メールからもう一度開くか、アドレス全体をブラウザーにコピーしてください。
errors-refused-title = 処理できませんでした
errors-refused = リクエストを読み取れませんでした。ページに戻って、もう一度お試しください。
errors-timeout = リクエストが時間内に届きませんでした。もう一度お試しください。
errors-internal = こちら側で問題が発生しました。1分ほどしてからもう一度お試しください。

## signup

signup-title = 登録：{ $list }
signup-heading = { $list } に登録
signup-intro = メールアドレスを入力してください。リンクをお送りします。そのリンクを開いて確認すると、登録が完了します。
signup-email-label = メールアドレス
signup-honeypot-label = この欄は空のままにしてください
signup-submit = 登録する
signup-choose-title = 登録
signup-choose = 配信リストを選んでください：
signup-several-title = 登録
signup-several-heading = 登録
signup-lists-legend = どの配信リストを受け取りますか？
signup-several-consent = チェックした配信リストをメールで受け取ります。それぞれいつでも配信を停止できます。
signup-no-list-ticked = 配信リストを1つ以上チェックしてください。
signup-optional = 任意
signup-choose-option = 選択してください
signup-field-missing = 「{ $field }」を入力してください。
signup-field-invalid = 「{ $field }」を確認してください。選択肢から選ぶか、1行で短めに入力してください。
signup-unreadable = フォームを読み取れませんでした。もう一度お試しください。
signup-unsupported = このサービスが対応していない形式でフォームが送信されました。
signup-too-large = フォームのデータが大きすぎます。メールアドレスだけを入力してください。
signup-origin-not-allowed = このフォームは、送信元のサイトからは利用できません。
signup-invalid-email = 有効なメールアドレスを入力してください（例：name@example.com）。
signup-consent-required = これらのメールの受け取りに同意する場合は、チェックボックスをオンにしてください。
signup-unknown-list = このフォームは存在しない配信リストを指しています。
signup-invalid-source = このフォームは、このサービスが受け付けない送信元情報を送っています。サイトの運営者にお知らせください。
signup-unknown-tag = このフォームは、配信リストにないタグを送っています。サイトの運営者にお知らせください。
signup-domain-not-allowed = このドメインのメールアドレスでは、ここで登録できません。別のメールアドレスをお使いください。
signup-rate-limited = お使いのネットワークからの登録が多すぎます。しばらくしてからもう一度お試しください。
signup-storage-unavailable = ただいま登録を保存できませんでした。1分ほどしてからもう一度お試しください。

## check inbox

check-inbox-title = 受信トレイをご確認ください
check-inbox-sent = このアドレスがメールを受信できる場合、メッセージをお送りしました。メール内のリンクを開き、ボタンを押して確認してください。
check-inbox-sent-for = このアドレスがメールを受信できる場合、{ $list } についてのメッセージをお送りしました。メール内のリンクを開き、ボタンを押して確認してください。
check-inbox-nothing-arrived = 数分たっても届きませんか？迷惑メールフォルダーもご確認ください。リンクの有効期間には限りがありますが、もう一度登録すれば新しいリンクが届きます。
check-inbox-open-inbox = { $provider } を開く

## surge

surge-title = あと1ステップです
surge-unusual = 現在このサイトには通常と異なるアクセスが集中しているため、確認メールはリクエストした方にだけお送りしています。
surge-ask = ボタンを押すと、確認メールをお送りします。
surge-button = 確認メールを送信する
surge-not-you = 登録した覚えがない場合は、このページを閉じてください。何も送信されません。

## confirm

confirm-title = 登録の確認：{ $list }
confirm-heading = 登録の確認
confirm-intro = { $list } をメールで受け取るよう申し込みがありました。ボタンを押して確認してください。確認されるまで、何も送信されません。
confirm-email-label = メールアドレス
confirm-email-hint = このメールが届いたアドレスを入力してください。リンクを自動でチェックするプログラムが、あなたの代わりに確認してしまうのを防ぐためです。
confirm-button = 登録を確認する
confirm-not-you = 申し込んだ覚えがない場合は、このページを閉じてください。確認しなければ、今後メールが届くことはありません。
confirm-wrong-address = このリンクの送信先のアドレスではありません。もう一度入力してください。
confirm-already-title = 確認済みです
confirm-already = このアドレスはすでに { $list } に登録されています。これ以上の操作は必要ありません。
confirm-done-title = 登録が完了しました
confirm-done = ありがとうございます。このアドレスを { $list } に登録しました。
confirm-done-any = ありがとうございます。このアドレスの登録が完了しました。
confirm-expired-title = このリンクは有効期限が切れています
confirm-expired = この確認リンクは無効です。有効期限が切れたか、新しいメールで置き換えられたか、すでに使用されています。もう一度登録できます。
confirm-sign-up-again = もう一度登録する

## manage

manage-title = メールアドレスを削除
manage-intro = { $list } からあなたのアドレスを削除します。今後このリストからメールは届きません。
manage-intro-any = このリンクが送られた配信リストからあなたのアドレスを削除します。今後このリストからメールは届きません。
manage-button = アドレスを削除する
manage-removed-title = アドレスを削除しました
manage-removed = { $list } からあなたのアドレスを削除しました。今後このリストからメールは届きません。
manage-removed-any = あなたのアドレスを削除しました。今後この配信リストからメールは届きません。

## preferences

preferences-title = メール配信設定
preferences-intro = { $site } の配信リストのうち、受け取りたいものにチェックを入れ、不要になったもののチェックを外して保存してください。
preferences-legend = 配信リスト
preferences-pending = 確認待ち：あなたの確認をお待ちしています。
preferences-kept = 登録時に入力された内容：
preferences-save = 保存する
preferences-remove-all-heading = メールアドレスを削除
preferences-remove-all-intro = または、これらすべての配信リストからアドレスをまとめて削除できます。今後これらのリストからメールは届きません。
preferences-remove-all = すべてから削除する
preferences-saved-title = 配信設定を保存しました
preferences-saved = { $site } の設定を保存しました。今後はチェックした配信リストのメールだけが届きます。
preferences-saved-any = 設定を保存しました。今後はチェックした配信リストのメールだけが届きます。
preferences-unreadable-title = フォームを読み取れませんでした
preferences-unreadable = 何も変更されていません。メールのリンクをもう一度開き、あらためて保存してください。

## privacy

privacy-title = プライバシー：{ $list }
privacy-heading = あなたのアドレスの取り扱い
privacy-intro = このページでは、{ $list } に登録したときに保存される情報と、その保存期間について説明します。
privacy-stored-heading = 保存される情報
privacy-stored = メールアドレス、配信リスト、同意した同意文のバージョン（{ $version }）とその本文、登録日時、確認した日時と方法（メール送信からどれくらい後に確認したかを含む）。フォームに指定がある場合は、登録した場所（「homepage-footer」など）と、フォームに記載されたトピックも保存されます。
privacy-fields = このフォームでは { $fields } もお尋ねしています。入力された内容は登録情報とともに、ほかの情報と同じ期間保存され、配信設定ページに表示されます。
privacy-no-ip = IP アドレスは保存しません。不正利用を抑えるため、signupd はネットワークごとの登録数を数えますが、記録するのはネットワークの一方向ハッシュだけで、アドレスそのものは記録しません：{ $limits }。カウンターの対象期間は最長{ $duration }で、その後の次回のクリーンアップで削除されます。
privacy-mail-heading = メールについて
privacy-mail = 確認用リンクを記載したメールが1通届きます。もう一度登録した場合も、新しいメールは{ $duration }に1通までです。確認するまで、ほかには何も送信されません。
privacy-unconfirmed = 確認しなかった場合、最後のメールから{ $duration }後にリンクは無効になり、その後の次回のクリーンアップでアドレスは削除されます。
privacy-neighbourhood = また、同じ近隣（同じプロバイダーのアドレスブロック）に属するネットワークはまとめて数えます：{ $limits }。
privacy-never-mailed = 確認メールをまだ送信できていない場合（多くの人が同時に登録したとき）、メールが送信されたかどうかにかかわらず、登録から{ $duration }後にアドレスは削除されます。
privacy-cap =
    あなたのアドレスを多数のフォームに入力して受信トレイをあふれさせることができないよう、このサービスのすべての配信リストを合わせて、1つのアドレスに送る確認メールは24時間あたり最大{ $n ->
       *[other] { $n }通
    }までとしています。そのため、あなたのアドレスの一方向ハッシュを、確認メールを送った各時刻とともに1日間保存します。
privacy-reputation = 確認すると、あなたのネットワーク（同じプロバイダーのアドレスブロック）の一方向ハッシュが日付とともに{ $duration }保存されます。多くの人が同時に登録したときは、確認が行われているネットワーク宛てのメールが優先して送信されます。確認についてそれ以外の情報は一緒に保存されません。
privacy-removal-heading = アドレスの削除
privacy-removal = すべてのメールに、アドレスを削除するためのリンクがあります。リンクを使うと、あなたのアドレスは削除されます。残るのはその一方向ハッシュだけで、新たな確認なしに再びメールが送られることはありません（登録に覚えがないと回答した場合は、今後一切送られません）。
privacy-shared = 登録を確認したとき、またはアドレスを削除したときは、運営者のシステムにその旨が、あなたのアドレスと同意内容とともに通知されます。
privacy-contact = ご質問は { $address } までお寄せください。

## mail

mail-greeting = こんにちは。
mail-asked = このアドレスで { $list } を受け取るよう、どなたか（おそらくご本人）から申し込みがありました。
mail-how = 確認するには、このリンクを開いて「{ $button }」ボタンを押してください：
mail-confirm-link = 登録を確認する
mail-copy = または、このアドレスをブラウザーにコピーしてください：
mail-until = このリンクは { $date } まで有効です。確認されるまで、ほかのメールは送信されません。
mail-not-you = お心当たりがない場合は、このメールを無視していただくか、このアドレスを完全に削除してください：
mail-remove-for-good = このアドレスを削除する
mail-welcome = このアドレスを { $list } に登録しました。ご確認ありがとうございました。
mail-preferences-any-time = 配信設定ページでは、受け取る内容の変更や配信の停止がいつでもできます：
mail-preferences-link = 配信設定ページを開く
mail-automated = このメールは自動送信されています。
mail-privacy = 保存する情報と保存期間：
mail-confirm-subject = 登録の確認をお願いします
mail-welcome-subject = 登録が完了しました

## language

language-name = 日本語
